import Dispatch

/// The application side of the HTTP layer.
///
/// `handle` is called on a connection's I/O queue, which must never block: answer at once
/// (health checks), or hand blocking work (the store, hashing) to another queue and call
/// `responder.respond` later from any thread. Each request is answered exactly once;
/// the connection answers pipelined requests strictly in order.
public protocol HTTPHandler: Sendable {
    func handle(_ request: HTTPRequest, responder: HTTPResponder)
}

/// Delivers the one answer to one request, from any thread: a complete response, or the
/// head of a response whose body is written later, piece by piece (server-sent events).
public struct HTTPResponder: Sendable {
    enum Answer: Sendable {
        case response(HTTPResponse)
        case stream(head: HTTPResponse, options: HTTPStreamOptions, opened: @Sendable (HTTPEventStream?) -> Void)
        case webSocket(head: HTTPResponse, limits: WebSocketLimits, handler: any WebSocketHandler)
    }

    private let deliver: @Sendable (Answer) -> Void
    /// The serial I/O queue of the request's connection; nil for a responder made without a
    /// server. A handler that keeps per-connection state (a WebSocket session) may confine
    /// it to this queue, where its calls arrive anyway: its work then runs where the
    /// connection's I/O does and crosses no thread on its way out. Never block on it.
    public let connectionQueue: DispatchQueue?
    /// Put on every answer's `accessTag` (`tagged`), unless the answer has its own.
    private var accessTag: String? = nil

    /// For handlers tested without a server: `respond` calls `deliver`; `openStream` calls
    /// its `opened` with nil (there is no connection to stream on).
    public init(_ deliver: @escaping @Sendable (HTTPResponse) -> Void) {
        self.connectionQueue = nil
        self.deliver = { answer in
            switch answer {
            case .response(let response): deliver(response)
            case .stream(_, _, let opened): opened(nil)
            case .webSocket(_, _, let handler): handler.closed(code: nil)
            }
        }
    }

    init(connectionQueue: DispatchQueue?, answer: @escaping @Sendable (Answer) -> Void) {
        self.connectionQueue = connectionQueue
        self.deliver = answer
    }

    /// A responder that passes the head of every answer (a response, a stream's head, a
    /// WebSocket's `101`) through `transform` before answering with this one: headers
    /// that every answer of a part of the server must carry, whoever writes the answer.
    public func transformingHeads(_ transform: @escaping @Sendable (inout HTTPResponse) -> Void) -> HTTPResponder {
        let deliver = self.deliver
        var transformed = HTTPResponder(connectionQueue: connectionQueue) { answer in
            switch answer {
            case .response(var response):
                transform(&response)
                deliver(.response(response))
            case .stream(var head, let options, let opened):
                transform(&head)
                deliver(.stream(head: head, options: options, opened: opened))
            case .webSocket(var head, let limits, let handler):
                transform(&head)
                deliver(.webSocket(head: head, limits: limits, handler: handler))
            }
        }
        transformed.accessTag = accessTag
        return transformed
    }

    /// This responder with `tag` as the `accessTag` of its answer (for the access log and
    /// metrics). A copy of a struct: nothing is allocated per request.
    public func tagged(_ tag: String) -> HTTPResponder {
        var tagged = self
        tagged.accessTag = tag
        return tagged
    }

    public func respond(_ response: HTTPResponse) {
        guard let accessTag, response.accessTag == nil else { return deliver(.response(response)) }
        var response = response
        response.accessTag = accessTag
        deliver(.response(response))
    }

    /// Answers with `head` (its status and headers; its body is ignored) and a body that
    /// stays open: the connection stops reading requests and the returned stream writes to
    /// it until either side closes. The body is delimited by the connection's close
    /// (RFC 9112 §6.3 rule 8), so it suits HTTP/1.0 clients and proxies alike.
    ///
    /// `opened` runs once on the connection's I/O queue with the stream, or with nil when
    /// the connection closed before the answer arrived.
    public func openStream(
        _ head: HTTPResponse, options: HTTPStreamOptions,
        opened: @escaping @Sendable (HTTPEventStream?) -> Void
    ) {
        var head = head
        if head.accessTag == nil { head.accessTag = accessTag }
        deliver(.stream(head: head, options: options, opened: opened))
    }

    /// Answers with `head` (the `101` of `WebSocketHandshake.accept`) and turns the
    /// connection into a WebSocket session served by `handler` (RFC 6455): requests the
    /// client pipelined behind this one are not read as HTTP; what follows the handshake is
    /// frames. The connection keeps its place under `maxConnections`.
    public func upgrade(_ head: HTTPResponse, limits: WebSocketLimits, handler: any WebSocketHandler) {
        var head = head
        if head.accessTag == nil { head.accessTag = accessTag }
        deliver(.webSocket(head: head, limits: limits, handler: handler))
    }
}
