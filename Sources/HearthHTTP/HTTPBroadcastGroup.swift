/// Open streams, or WebSocket sessions, that get the same bytes event after event (the
/// listeners of one location), sorted once by the I/O loop each lives on. Every send then
/// takes one hop per loop, and each loop walks its own connections, so a fan-out is
/// spread over every core the server has and nothing is grouped again per event.
///
/// Usable from any thread; sends from one thread keep their order on each connection, and
/// keep their order with that thread's other sends to the same connections (every one is
/// posted to the connection's loop in turn). A loop's walk lets the answers to requests
/// waiting on that loop in every `IOLoop.answerCheckInterval` connections. What one `send`
/// carries (a push: one event, or one message's frames) is one buffer, shared by every
/// connection, and goes through the loop's send ring where it has one.
public struct HTTPBroadcastGroup: Sendable {
    private enum Kind: Sendable {
        /// Bytes go out as they are (an SSE stream's events).
        case events
        /// Each message goes out as one WebSocket text frame.
        case webSocket
    }

    private let kind: Kind
    private let loops: [(loop: IOLoop, connections: [HTTPConnection])]

    /// The connections' count.
    public let count: Int

    private init(_ kind: Kind, _ connections: [HTTPConnection]) {
        self.kind = kind
        self.loops = HTTPConnection.byLoop(connections)
        self.count = connections.count
    }

    /// A group of open event streams.
    public static func streams(_ streams: [HTTPEventStream]) -> HTTPBroadcastGroup {
        HTTPBroadcastGroup(.events, streams.map(\.connection))
    }

    /// A group of WebSocket sessions.
    public static func sessions(_ sessions: [WebSocketSession]) -> HTTPBroadcastGroup {
        HTTPBroadcastGroup(.webSocket, sessions.map(\.connection))
    }

    /// Sends `messages`, in order and as one unit, to every connection: for streams they
    /// are written as they are; for sessions each is framed once as a text message (UTF-8),
    /// so the wire protocol's chunks of one message go out together and a reader's bound
    /// (`HTTPStreamOptions.maxBufferedBytes`) judges them as one.
    public func send(_ messages: [[UInt8]]) {
        if messages.isEmpty || count == 0 { return }
        switch kind {
        case .events:
            let bytes = messages.count == 1 ? messages[0] : Array(messages.joined())
            for (loop, connections) in loops {
                loop.post {
                    loop.forEach(connections, sending: bytes) { connection in connection.streamSend(bytes) }
                }
            }
        case .webSocket:
            let frames = WebSocketFrameWriter.textFrames(messages)
            for (loop, connections) in loops {
                loop.post {
                    loop.forEach(connections, sending: frames) { connection in connection.webSocketSend(frames) }
                }
            }
        }
    }
}
