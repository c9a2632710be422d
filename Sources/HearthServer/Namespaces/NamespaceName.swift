/// A namespace's name: what `?ns=` or the host's first label names. Firebase's
/// database instance names: lowercase letters, digits and hyphens, here 1 to
/// `maxBytes` of them, not starting with a hyphen.
public enum NamespaceName {
    /// The longest name: PostgreSQL's 63-byte identifiers less the schema prefix
    /// (`hearth_ns_`); longer than Firebase's own names (`<project id>-default-rtdb`, at
    /// most 43) and than a DNS label may be less.
    public static let maxBytes = 53

    /// Why `name` is not a namespace's name, or nil when it is one.
    public static func problem(_ name: String) -> String? {
        let bytes = Array(name.utf8)
        if bytes.isEmpty { return "A namespace name is empty" }
        if bytes.count > maxBytes { return "A namespace name is longer than \(maxBytes) characters" }
        let allowed = bytes.allSatisfy { (97...122).contains($0) || (48...57).contains($0) || $0 == 45 }
        if !allowed || bytes[0] == 45 {
            return "Namespace \"\(name.prefix(maxBytes))\" is not a valid name: lowercase letters, digits and hyphens, not starting with a hyphen"
        }
        return nil
    }

    public static func isValid(_ name: String) -> Bool { problem(name) == nil }

    /// The namespace a request names: its `ns` query parameter (raw, as the SDKs send it,
    /// docs/protocol/wire.md §1.1), else the first label of a `Host` of three or more
    /// dot-separated labels that is not an IP address (`<ns>.<domain>`, what the SDKs
    /// derive from a database URL without `?ns=`), else nil.
    static func named(query: String?, host: String?) -> (name: String, fromHost: Bool)? {
        if let query {
            for pair in query.split(separator: "&") {
                let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                if parts.count == 2, parts[0] == "ns" { return (String(parts[1]), false) }
            }
        }
        guard let host else { return nil }
        if namesNoNamespace(host) { return nil }
        let name = host.split(separator: ":", maxSplits: 1).first.map(String.init) ?? host
        let labels = name.split(separator: ".", omittingEmptySubsequences: false)
        guard labels.count >= 3, !labels.allSatisfy({ $0.allSatisfy(\.isNumber) }), !name.hasPrefix("[") else { return nil }
        return (labels[0].lowercased(), true)
    }

    /// True for the hosts that name no namespace in the way `named` reads them, decided on
    /// the bytes: an ASCII host (not starting with `:`) whose part before any `:` has fewer
    /// than three dot-separated labels or only digits in each (`localhost`,
    /// `127.0.0.1:8080`). False means "read it in full". Splitting every request's `Host`
    /// into `Character`s cost ~2 % of the server's CPU on creates.
    static func namesNoNamespace(_ host: String) -> Bool {
        var labels = 1
        var allDigits = true
        for (offset, byte) in host.utf8.enumerated() {
            if byte >= 0x80 || (offset == 0 && byte == UInt8(ascii: ":")) { return false }
            if byte == UInt8(ascii: ":") { break }
            if byte == UInt8(ascii: ".") {
                labels += 1
            } else if !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) {
                allDigits = false
            }
        }
        return labels < 3 || allDigits
    }
}
