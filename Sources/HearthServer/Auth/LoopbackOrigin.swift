import HearthSystem

/// Whether a web page's origin is this machine's: `http` or `https`, a loopback host
/// (`LoopbackHost`: `localhost`, 127.0.0.0/8, `[::1]`), any port. Parsed (scheme, host, port), never matched by text
/// prefix: `http://localhost.evil.example`, `http://127.0.0.1.nip.io` and
/// `http://localhost@evil.example` are other machines. Pure; fed from literals in tests.
enum LoopbackOrigin {
    /// True for an `Origin` header naming a loopback origin: `scheme://host[:port]`, nothing
    /// after. `null` (a sandboxed frame, a `file:` page) is not one.
    static func isLoopback(origin: String) -> Bool {
        guard let (authority, rest) = split(origin) else { return false }
        return rest.isEmpty && isLoopback(authority: authority)
    }

    /// True for a `Referer` header (a whole URL) whose page is on a loopback origin.
    static func isLoopback(referer: String) -> Bool {
        guard let (authority, rest) = split(referer) else { return false }
        return (rest.isEmpty || rest.first == "/" || rest.first == "?" || rest.first == "#") && isLoopback(authority: authority)
    }

    /// The authority (between `scheme://` and the path) and what follows it, for `http` and
    /// `https` URLs; nil for any other scheme.
    private static func split(_ url: String) -> (authority: Substring, rest: Substring)? {
        guard let schemeEnd = url.range(of: "://") else { return nil }
        let scheme = url[..<schemeEnd.lowerBound].lowercased()
        guard scheme == "http" || scheme == "https" else { return nil }
        let afterScheme = url[schemeEnd.upperBound...]
        let end = afterScheme.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? afterScheme.endIndex
        return (afterScheme[..<end], afterScheme[end...])
    }

    /// `host[:port]` with a loopback host and a port of 1 to 5 digits up to 65535; user
    /// information (`user@host`) is refused outright.
    private static func isLoopback(authority: Substring) -> Bool {
        guard !authority.contains("@") else { return false }
        let host: Substring
        let portPart: Substring
        if authority.first == "[" {
            guard let close = authority.firstIndex(of: "]") else { return false }
            host = authority[authority.index(after: authority.startIndex)..<close]
            portPart = authority[authority.index(after: close)...]
        } else {
            let colon = authority.firstIndex(of: ":") ?? authority.endIndex
            host = authority[..<colon]
            portPart = authority[colon...]
            if host.contains(":") { return false }
        }
        guard LoopbackHost.contains(String(host)) else { return false }
        if portPart.isEmpty { return true }
        guard portPart.first == ":" else { return false }
        let digits = portPart.dropFirst()
        guard (1...5).contains(digits.count), digits.allSatisfy({ $0.isASCII && $0.isNumber }), let port = Int(digits) else { return false }
        return port <= 65_535
    }
}
