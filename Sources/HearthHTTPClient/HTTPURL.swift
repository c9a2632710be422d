/// An `http://` or `https://` URL as the client needs it: scheme, host, port and the
/// request target (path and query). No user info, no fragment.
public struct HTTPURL: Sendable, Hashable, CustomStringConvertible {
    public var isTLS: Bool
    /// A name or an address literal (IPv6 without brackets).
    public var host: String
    public var port: Int
    /// The path and query, starting with `/`.
    public var target: String

    /// The longest URL accepted.
    public static let maxLength = 2048

    public init(_ text: String) throws(HTTPClientError) {
        guard text.utf8.count <= Self.maxLength else { throw .invalidURL("longer than \(Self.maxLength) bytes") }
        guard text.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw .invalidURL("spaces, control or non-ASCII characters (percent-encode them)")
        }
        let rest: Substring
        if text.lowercased().hasPrefix("http://") {
            (isTLS, rest) = (false, text.dropFirst("http://".count))
        } else if text.lowercased().hasPrefix("https://") {
            (isTLS, rest) = (true, text.dropFirst("https://".count))
        } else {
            throw .invalidURL("not http:// or https://")
        }
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        var path = String(rest[authorityEnd...])
        if let hash = path.firstIndex(of: "#") { path = String(path[..<hash]) }
        if path.isEmpty || path.hasPrefix("?") { path = "/" + path }
        guard !authority.contains("@") else { throw .invalidURL("user information in a URL is not supported") }
        var hostPart = authority
        var portText: Substring? = nil
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw .invalidURL("an unclosed [ in the host") }
            hostPart = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if after.hasPrefix(":") { portText = after.dropFirst() } else if !after.isEmpty { throw .invalidURL("text after the host") }
        } else if let colon = authority.lastIndex(of: ":") {
            hostPart = authority[..<colon]
            portText = authority[authority.index(after: colon)...]
        }
        guard !hostPart.isEmpty else { throw .invalidURL("no host") }
        host = String(hostPart)
        if let portText {
            guard let port = Int(portText), (1...65535).contains(port) else { throw .invalidURL("the port is not 1...65535") }
            self.port = port
        } else {
            port = isTLS ? 443 : 80
        }
        target = path
    }

    /// The `Host` header: the port only when not the scheme's default.
    var hostHeader: String {
        let shown = host.contains(":") ? "[\(host)]" : host
        return port == (isTLS ? 443 : 80) ? shown : "\(shown):\(port)"
    }

    public var description: String {
        (isTLS ? "https://" : "http://") + hostHeader + target
    }

    /// The URL without its query (which may carry a key): for logs.
    public var redacted: String {
        (isTLS ? "https://" : "http://") + hostHeader + (target.split(separator: "?", maxSplits: 1).first.map(String.init) ?? "/")
    }
}
