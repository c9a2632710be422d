/// The application side of WebSocket sessions (the Firebase wire-protocol adapter is one).
/// The HTTP layer frames, checks and times; it knows nothing of what the messages mean.
///
/// Every call arrives on the session's I/O queue, in order, and must not block: hand
/// blocking work elsewhere and answer later through the `WebSocketSession`, from any thread.
public protocol WebSocketHandler: AnyObject, Sendable {
    /// The `101` is queued: the session is open and `session` may send.
    func opened(_ session: WebSocketSession)
    /// A whole message from the peer.
    func received(_ message: WebSocketMessage)
    /// Once, when the session has ended for any reason, with the close code that ended it
    /// (the peer's, ours, or nil when the connection dropped without one). Also called,
    /// without `opened`, when the connection closed before the upgrade was answered.
    func closed(code: WebSocketCloseCode?)
}

/// The sending end of one open WebSocket session. Usable from any thread; every call hops
/// onto the connection's I/O queue, so sends from one thread keep their order.
public final class WebSocketSession: Sendable {
    let connection: HTTPConnection

    init(connection: HTTPConnection) {
        self.connection = connection
    }

    /// The peer's address as the connection saw it (the proxy, behind one).
    public var peerAddress: String { connection.remoteAddress }

    /// Sends one text message (`bytes` must be UTF-8). Past
    /// `WebSocketLimits.maxBufferedBytes` waiting for a peer that does not read, the session
    /// is ended instead (close 1008).
    public func send(text bytes: [UInt8]) {
        perform { $0.webSocketSend(WebSocketFrameWriter.frame(.text, bytes)) }
    }

    /// Sends several text frames as one unit (the wire protocol's chunks of one message):
    /// they go out back to back, and a peer that falls behind gets all of them or none
    /// (`WebSocketLimits.maxBufferedBytes` judges them together, as one message).
    public func send(texts: [[UInt8]]) {
        guard !texts.isEmpty else { return }
        let frames = WebSocketFrameWriter.textFrames(texts)
        perform { $0.webSocketSend(frames) }
    }

    /// Bytes the application holds for a message it has not got whole yet (say, the wire
    /// protocol's chunks): counted with the connection's own under
    /// `HTTPLimits.maxIncompleteBytes` and its address's share, and timed by
    /// `WebSocketLimits.partialMessageTimeout`. Past a bound the session is closed (1013 or
    /// 1008) and `closed` follows. Report 0 once the message is whole.
    public func holding(_ bytes: Int) {
        perform { $0.webSocketHolding(bytes) }
    }

    /// Bytes of whole messages the application took and has not handled yet (a queue of
    /// requests behind the one being handled): counted like `holding`'s under
    /// `HTTPLimits.maxIncompleteBytes` and its address's share, but never timed. While
    /// `pause`, the connection reads nothing more from the peer: TCP holds the rest back
    /// and the peer's sends wait, nothing is lost; a later call without `pause` reads
    /// again. The peer is not judged dead meanwhile (its pongs wait unread too).
    public func waiting(_ bytes: Int, pause: Bool) {
        perform { $0.webSocketWaiting(bytes, pause: pause) }
    }

    /// Starts the closing handshake with `code`; the connection closes once the close frame
    /// is written and the peer has answered (or `closeTimeout` passed).
    public func close(_ code: WebSocketCloseCode = .normal, reason: String = "") {
        perform { $0.webSocketClose(code, reason: reason) }
    }

    private func perform(_ body: @escaping @Sendable (HTTPConnection) -> Void) {
        connection.perform(body)
    }
}
