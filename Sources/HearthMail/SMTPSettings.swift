/// Where and how Hearth sends mail (email actions): `smtpURL` such as
/// `smtp://127.0.0.1:2525` or `smtp+starttls://user:pass@host:587`, and the sender.
public struct SMTPSettings: Sendable, Equatable {
    public enum Security: String, Sendable, Equatable {
        /// No TLS (a relay on loopback or a private network).
        case plain = "smtp"
        /// `STARTTLS` before anything else is sent; the server's certificate is verified.
        case startTLS = "smtp+starttls"
    }

    public var security: Security
    public var host: String
    public var port: Int
    public var username: String?
    public var password: String?
    /// The envelope and `From:` address.
    public var from: String
    /// PEM file of the certificate authorities trusted for STARTTLS (else the system's).
    public var caFile: String?

    public enum ParseError: Error, Sendable, Equatable, CustomStringConvertible {
        case scheme
        case host
        case port
        case from
        public var description: String {
            switch self {
            case .scheme: return "smtpURL must start with smtp:// or smtp+starttls://"
            case .host: return "smtpURL has no host"
            case .port: return "smtpURL's port must be 1-65535"
            case .from: return "mailFrom must be one address like hearth@example.com"
            }
        }
    }

    /// Parses `url` (`smtp[+starttls]://[user[:password]@]host[:port]`, user and password
    /// percent-encoded); the port defaults to 25 (plain) or 587 (STARTTLS).
    public init(url: String, from: String, caFile: String? = nil) throws(ParseError) {
        let parts = url.split(separator: "://", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, let security = Security(rawValue: String(parts[0]).lowercased()) else { throw .scheme }
        var rest = Substring(parts[1])
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        var username: String?, password: String?
        if let at = rest.lastIndex(of: "@") {
            let credentials = rest[..<at]
            rest = rest[rest.index(after: at)...]
            if let colon = credentials.firstIndex(of: ":") {
                username = Self.percentDecoded(credentials[..<colon])
                password = Self.percentDecoded(credentials[credentials.index(after: colon)...])
            } else {
                username = Self.percentDecoded(credentials)
            }
        }
        var host = rest, port = security == .plain ? 25 : 587
        if rest.hasPrefix("["), let close = rest.firstIndex(of: "]") {
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if after.hasPrefix(":") {
                guard let value = Int(after.dropFirst()), (1...65535).contains(value) else { throw .port }
                port = value
            }
        } else if let colon = rest.lastIndex(of: ":") {
            host = rest[..<colon]
            guard let value = Int(rest[rest.index(after: colon)...]), (1...65535).contains(value) else { throw .port }
            port = value
        }
        guard !host.isEmpty, !host.contains(where: { $0 == "/" || $0 == " " }) else { throw .host }
        guard MailMessage.isPlainAddress(from) else { throw .from }
        self.security = security
        self.host = String(host)
        self.port = port
        self.username = username
        self.password = password
        self.from = from
        self.caFile = caFile
    }

    static func percentDecoded(_ text: Substring) -> String {
        var bytes: [UInt8] = []
        var iterator = Array(text.utf8).makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%"), let high = iterator.next(), let low = iterator.next(),
               let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16) {
                bytes.append(value)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
