/// Open streams, or WebSocket sessions, that get the same bytes event after event (the
/// listeners of one location), sorted once by the I/O loop each lives on. Every send then
/// takes one hop per loop, and each loop walks its own connections, so a fan-out is
/// spread over every core the server has and nothing is grouped again per event.
///
/// Usable from any thread; sends from one thread keep their order on each connection, and
/// keep their order with that thread's other sends to the same connections (every one is
/// posted to the connection's loop in turn). A loop's walk lets the answers to requests
/// waiting on that loop in every `IOLoop.answerCheckInterval` connections. A single message
/// (a push: one event, or one frame) goes through the loop's send ring where it has one;
/// several go one `send()` per connection and message.
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

    /// Sends `messages`, in order, to every connection: for streams each is written as it
    /// is; for sessions each is framed once as a text message (UTF-8).
    public func send(_ messages: [[UInt8]]) {
        if messages.isEmpty || count == 0 { return }
        switch kind {
        case .events where messages.count == 1:
            let bytes = messages[0]
            for (loop, connections) in loops {
                loop.post {
                    loop.forEach(connections, sending: bytes) { connection in connection.streamSend(bytes) }
                }
            }
        case .webSocket where messages.count == 1:
            let frame = WebSocketFrameWriter.frame(.text, messages[0])
            for (loop, connections) in loops {
                loop.post {
                    loop.forEach(connections, sending: frame) { connection in connection.webSocketSend(frame) }
                }
            }
        case .events:
            for (loop, connections) in loops {
                loop.post {
                    loop.forEach(connections) { connection in
                        for bytes in messages { connection.streamSend(bytes) }
                    }
                }
            }
        case .webSocket:
            let frames = messages.map { WebSocketFrameWriter.frame(.text, $0) }
            for (loop, connections) in loops {
                loop.post {
                    loop.forEach(connections) { connection in
                        for frame in frames { connection.webSocketSend(frame) }
                    }
                }
            }
        }
    }
}
