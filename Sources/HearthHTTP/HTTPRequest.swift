/// One parsed HTTP/1.1 request, body complete (chunked bodies already de-chunked).
public struct HTTPRequest: Sendable {
    /// The method token as sent (case-sensitive, RFC 9110 §9.1), e.g. "GET".
    public var method: String
    /// The request target exactly as sent, e.g. "/users/a.json?print=pretty".
    public var target: String
    /// The part of `target` before `?`, still percent-encoded.
    public var path: String
    /// The part of `target` after `?`, still percent-encoded; nil when there is no `?`.
    public var query: String?
    /// HTTP minor version: 0 for HTTP/1.0, 1 for HTTP/1.1.
    public var minorVersion: Int
    public var headers: HTTPHeaders
    public var body: [UInt8]
    /// The client's address as text ("127.0.0.1"), set by the connection: the peer's, or,
    /// when the peer is a trusted proxy, the address it forwarded (`X-Forwarded-For`).
    public var remoteAddress: String
    /// The socket peer's address (the proxy, behind one).
    public var peerAddress: String = ""
    /// `https` when a trusted proxy says the client used TLS (`X-Forwarded-Proto`).
    public var forwardedProto: String?
    /// This request's id: a trusted proxy's `X-Request-Id`, or one the server made. Sent
    /// back in `X-Request-Id` and written to the access log.
    public var requestID: String = ""

    public init(
        method: String, target: String, minorVersion: Int = 1,
        headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = [], remoteAddress: String = ""
    ) {
        self.method = method
        self.target = target
        if let q = target.firstIndex(of: "?") {
            self.path = String(target[..<q])
            self.query = String(target[target.index(after: q)...])
        } else {
            self.path = target
            self.query = nil
        }
        self.minorVersion = minorVersion
        self.headers = headers
        self.body = body
        self.remoteAddress = remoteAddress
    }
}
