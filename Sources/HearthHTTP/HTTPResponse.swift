/// A complete response. The connection adds `Content-Length`, `Date`-free framing and
/// `Connection` headers itself; handlers set only their own headers.
public struct HTTPResponse: Sendable {
    public var status: Int
    public var headers: HTTPHeaders
    public var body: [UInt8]
    /// A short label for the access record (`HTTPAccessRecord.tag`), never sent: the
    /// handler names what the exchange was about (the server: the database it reached), so
    /// the access log and metrics can say it without this layer knowing what it means.
    public var accessTag: String? = nil

    public init(status: Int, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}
