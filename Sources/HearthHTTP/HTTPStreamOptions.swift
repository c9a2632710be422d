/// The bounds of one open-ended response body (a server-sent event stream).
public struct HTTPStreamOptions: Sendable {
    /// Bytes that may wait, not started, behind the send going out to a slow reader. A
    /// `send` that would pass it ends the stream instead: queued sends that have not
    /// started going out are dropped, the one being written is finished, `overflowBytes`
    /// follow, and the connection closes once they are written (or after `writeTimeout`
    /// if the peer never reads again). The send going out is not counted, and a send
    /// right behind it is taken whatever its size: a value larger than the bound reaches
    /// a reader that reads, and events may queue behind it while it goes. So a client that
    /// stops reading costs at most this much memory beside the two sends at the head of
    /// its queue, never slows anyone else (docs/design.md §5), and sees whole events then
    /// the overflow bytes if it catches up.
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
