/// The writing end of one open response body, handed out by `HTTPResponder.openStream`.
/// Usable from any thread; every call is posted to the connection's I/O loop (`IOLoop.post`),
/// so writes keep the order in which they were made from one thread.
///
/// The HTTP layer knows nothing of what is written: the caller frames its own events.
public final class HTTPEventStream: Sendable {
    let connection: HTTPConnection

    init(connection: HTTPConnection) {
        self.connection = connection
    }

    /// The peer's address, as the connection saw it.
    public var remoteAddress: String { connection.remoteAddress }

    /// Queues `bytes`. Past `HTTPStreamOptions.maxBufferedBytes` the stream is ended (see there).
    public func send(_ bytes: [UInt8]) {
        connection.perform { $0.streamSend(bytes) }
    }

    /// Queues `bytes` as the last thing written, then closes once they are out (or when the
    /// write timeout passes).
    public func finish(_ bytes: [UInt8]) {
        connection.perform { $0.streamFinish(bytes) }
    }

    /// Closes at once, dropping whatever is still queued.
    public func close() {
        connection.perform { $0.close() }
    }
}
