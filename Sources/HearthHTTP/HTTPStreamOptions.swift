/// The bounds of one open-ended response body (a server-sent event stream).
public struct HTTPStreamOptions: Sendable {
    /// Bytes that may wait unsent for a slow reader. A `send` that would pass it (while
    /// earlier bytes still wait; a single larger send into a drained buffer is accepted)
    /// ends the stream instead: `overflowBytes` is queued, whatever the socket still takes is written,
    /// and the connection closes. So a client that stops reading costs at most this much
    /// memory and never slows anyone else (DESIGN.md §5).
    public var maxBufferedBytes: Int
    /// The last words for a reader that fell behind (for SSE, a `cancel` event).
    public var overflowBytes: [UInt8]
    /// Runs once, on the I/O queue, when the stream's connection has closed for any reason
    /// (the peer left, overflow, `close()`, server shutdown).
    public var onClose: @Sendable () -> Void

    public static let defaultMaxBufferedBytes = 1024 * 1024

    public init(
        maxBufferedBytes: Int = HTTPStreamOptions.defaultMaxBufferedBytes,
        overflowBytes: [UInt8] = [],
        onClose: @escaping @Sendable () -> Void = {}
    ) {
        self.maxBufferedBytes = maxBufferedBytes
        self.overflowBytes = overflowBytes
        self.onClose = onClose
    }
}
