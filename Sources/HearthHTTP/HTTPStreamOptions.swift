/// The bounds of one open-ended response body (a server-sent event stream).
public struct HTTPStreamOptions: Sendable {
    /// Bytes that may wait unsent for a slow reader. A `send` that would pass it (while
    /// earlier bytes still wait; a single larger send into a drained buffer is accepted)
    /// ends the stream instead: queued sends that have not started going out are dropped,
    /// the one being written is finished, `overflowBytes` follow, and the connection closes
    /// once they are written (or after `writeTimeout` if the peer never reads again). So a
    /// client that stops reading costs at most this much memory, never slows anyone else
    /// (docs/design.md §5), and sees whole events then the overflow bytes if it catches up.
    public var maxBufferedBytes: Int
    /// The last words for a reader that fell behind (for SSE, a `cancel` event).
    public var overflowBytes: [UInt8]
    /// Runs once, on the I/O queue, when the stream has ended for any reason: its last bytes
    /// (`finish`, or `overflowBytes` after an overflow) are written and the connection is
    /// closing, or the connection closed first (the peer left, `close()`, server shutdown).
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
