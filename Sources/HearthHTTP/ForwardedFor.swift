/// Who the client is when requests come through reverse proxies (`X-Forwarded-For`
/// and `X-Forwarded-Proto` are believed only from configured proxy addresses).
enum ForwardedFor {
    /// The client address: the peer, unless the peer is a trusted proxy; then the
    /// `X-Forwarded-For` list is read from the right (the hop nearest to us), skipping
    /// trusted proxies, and the first address that is not one is the client. A list made
    /// only of trusted addresses gives its leftmost. Malformed entries stop the walk at the
    /// nearest trusted hop (the peer), so a client cannot smuggle in an address.
    static func client(peer: String, header: String?, trusted: Set<String>) -> String {
        guard trusted.contains(peer), let header else { return peer }
        var candidate = peer
        for part in header.split(separator: ",").reversed() {
            let address = part.filter { $0 != " " && $0 != "\t" }
            guard isAddress(address) else { return candidate }
            candidate = String(address)
            if !trusted.contains(candidate) { return candidate }
        }
        return candidate
    }

    /// `http` or `https` from `X-Forwarded-Proto`, believed only from a trusted peer.
    static func proto(peer: String, header: String?, trusted: Set<String>) -> String? {
        guard trusted.contains(peer), let header else { return nil }
        let value = header.split(separator: ",").first.map { $0.filter { $0 != " " }.lowercased() }
        return value == "https" || value == "http" ? value : nil
    }

    /// A bare IPv4 or IPv6 literal (digits, hex, dots, colons; at most 45 characters).
    static func isAddress(_ text: some StringProtocol) -> Bool {
        guard !text.isEmpty, text.utf8.count <= 45 else { return false }
        return text.utf8.allSatisfy { byte in
            ASCII.isDigit(byte) || byte == UInt8(ascii: ".") || byte == UInt8(ascii: ":")
                || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte | 0x20)
        }
    }

    /// A request id a trusted proxy sent (`X-Request-Id`), if it is a short safe token.
    static func requestID(_ header: String?) -> String? {
        guard let header, (1...64).contains(header.utf8.count),
              header.utf8.allSatisfy({ ASCII.isDigit($0) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0 | 0x20)
                  || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") }) else { return nil }
        return header
    }
}

/// One line of the access log: what was asked, what was answered, for whom.
public struct HTTPAccessRecord: Sendable {
    public var method: String
    /// The path without the query (which may carry `auth=<token>`).
    public var path: String
    public var status: Int
    /// Body bytes sent (for a stream: everything written until it closed).
    public var bytes: Int
    /// From the complete request to the queued response (for a stream: to its close).
    public var durationNanoseconds: UInt64
    public var requestID: String
    /// The client through trusted proxies, and the socket peer.
    public var client: String
    public var peer: String
    public var isStream: Bool
    /// Request body bytes (after de-chunking); for a WebSocket session, every byte received
    /// over it (so a session that took in large messages, or was refused holding a large
    /// incomplete one, lets the server give that memory back: `MemoryTrimmer`).
    public var requestBytes: Int = 0
    /// The answer's `HTTPResponse.accessTag` (what the handler says the exchange reached).
    public var tag: String? = nil

    public init(method: String, path: String, status: Int, bytes: Int, durationNanoseconds: UInt64, requestID: String,
                client: String, peer: String, isStream: Bool, requestBytes: Int = 0, tag: String? = nil) {
        self.method = method
        self.path = path
        self.status = status
        self.bytes = bytes
        self.durationNanoseconds = durationNanoseconds
        self.requestID = requestID
        self.client = client
        self.peer = peer
        self.isStream = isStream
        self.requestBytes = requestBytes
        self.tag = tag
    }
}
