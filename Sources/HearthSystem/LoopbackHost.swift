/// Whether a host names this machine's loopback interface, judged whole rather than by a
/// text prefix (`127.0.0.1.nip.io` is a name that resolves anywhere). Pure; used for key
/// URLs allowed over cleartext, the emulator mode's listening host and peers, and the
/// origins of pages that may use the emulator's credentials.
public enum LoopbackHost {
    /// `localhost` exactly (any case, no trailing dot), an IPv4 literal in 127.0.0.0/8
    /// written as four decimal parts without leading zeros (resolvers read `0177.0.0.1` as
    /// octal and `2130706433` as one number: refused rather than guessed), or the IPv6
    /// loopback `::1` in any of its spellings.
    public static func contains(_ host: String) -> Bool {
        if host.lowercased() == "localhost" { return true }
        if host.contains(":") { return ipv6Groups(host) == [0, 0, 0, 0, 0, 0, 0, 1] }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return false }
        let octets = parts.compactMap { part -> Int? in
            guard (1...3).contains(part.count), part.allSatisfy({ $0.isASCII && $0.isNumber }), part == "0" || !part.hasPrefix("0") else { return nil }
            return Int(part).flatMap { $0 <= 255 ? $0 : nil }
        }
        return octets.count == 4 && octets[0] == 127
    }

    /// The eight 16-bit groups of an IPv6 literal (hex groups, at most one `::`), nil when it
    /// is not one (an embedded IPv4 part or a zone is not accepted here).
    public static func ipv6Groups(_ text: String) -> [Int]? {
        func groups(_ part: Substring) -> [Int]? {
            if part.isEmpty { return [] }
            var values: [Int] = []
            for group in part.split(separator: ":", omittingEmptySubsequences: false) {
                guard (1...4).contains(group.count), group.allSatisfy(\.isHexDigit), let value = Int(group, radix: 16) else { return nil }
                values.append(value)
            }
            return values
        }
        let halves = text.split(separator: "::", omittingEmptySubsequences: false)
        switch halves.count {
        case 1:
            guard let all = groups(Substring(text)), all.count == 8 else { return nil }
            return all
        case 2:
            guard let head = groups(Substring(halves[0])), let tail = groups(Substring(halves[1])), head.count + tail.count < 8 else { return nil }
            return head + Array(repeating: 0, count: 8 - head.count - tail.count) + tail
        default:
            return nil
        }
    }

    /// A socket peer's address (as the server formats it: IPv4 dotted, IPv6 without
    /// brackets, possibly an IPv4-mapped IPv6 address) or a configured host, with or
    /// without brackets, on the loopback interface.
    public static func containsAddress(_ address: String) -> Bool {
        var bare = Substring(address)
        if bare.hasPrefix("["), bare.hasSuffix("]") { bare = bare.dropFirst().dropLast() }
        let lowered = bare.lowercased()
        if lowered.hasPrefix("::ffff:"), lowered.dropFirst(7).contains(".") { return contains(String(lowered.dropFirst(7))) }
        return contains(lowered)
    }
}
