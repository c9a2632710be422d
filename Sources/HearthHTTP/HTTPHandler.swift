/// The application side of the HTTP layer.
///
/// `handle` is called on a connection's I/O queue, which must never block: answer at once
/// (health checks), or hand blocking work (SQLite, hashing) to another queue and call
/// `responder.respond` later from any thread. Each request is answered exactly once;
/// the connection answers pipelined requests strictly in order.
public protocol HTTPHandler: Sendable {
    func handle(_ request: HTTPRequest, responder: HTTPResponder)
}

/// Delivers the one response to one request, from any thread.
public struct HTTPResponder: Sendable {
    private let deliver: @Sendable (HTTPResponse) -> Void

    public init(_ deliver: @escaping @Sendable (HTTPResponse) -> Void) {
        self.deliver = deliver
    }

    public func respond(_ response: HTTPResponse) {
        deliver(response)
    }
}
