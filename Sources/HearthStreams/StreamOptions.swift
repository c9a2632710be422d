/// The hub's bounds and cadences (docs/design.md §5). Every bound has a test that crosses
/// it.
public struct StreamOptions: Sendable {
    /// Open streams in all. Over → the new stream is refused (503).
    public var maxStreams: Int = StreamOptions.defaultMaxStreams
    /// Open streams from one client address. Over → refused (429).
    public var maxStreamsPerAddress: Int = StreamOptions.defaultMaxStreamsPerAddress
    /// Changes held for a subscriber while its initial snapshot is being read. Over → the
    /// subscriber is cancelled (it reconnects and resumes).
    public var maxPendingChanges: Int = StreamOptions.defaultMaxPendingChanges
    /// Unsent bytes a slow reader may have waiting behind the event going out to it.
    /// Over → `cancel` and close.
    public var maxQueuedBytes: Int = StreamOptions.defaultMaxQueuedBytes
    /// Changes replayed to a client resuming with `Last-Event-ID`. Past it the client gets
    /// a fresh snapshot instead (cheaper than thousands of events).
    public var maxReplayChanges: Int = StreamOptions.defaultMaxReplayChanges
    /// Stored bytes (the changes' JSON) of the missed changes replayed to a resuming
    /// client. Past it the client gets a fresh snapshot instead: the replay would hold many
    /// times that in memory while it is read and encoded (a client that had written large
    /// values could make every resume read them all), and a replay larger than a stream may
    /// queue (`maxQueuedBytes`) would cut the stream off as a slow reader.
    public var maxReplayBytes: Int = StreamOptions.defaultMaxReplayBytes
    /// Children one re-read of a query stream without a limit takes (those the changes
    /// since its last re-read touched). Over → its whole result is re-read instead.
    public var maxQueryChildrenReread: Int = StreamOptions.defaultMaxQueryChildrenReread
    /// Keys of a query stream's window the hub remembers (as hashes, about 11 bytes each),
    /// so a child that leaves the window gets a `null` and one that was never in it gets
    /// nothing. Over → not remembered: every child that a change touched and that is not in
    /// the window gets a `null`, which changes nothing for a client that did not have it.
    public var maxTrackedWindowKeys: Int = StreamOptions.defaultMaxTrackedWindowKeys
    /// Seconds between `keep-alive` events (docs/protocol/streaming.md §2: about 30 s).
    public var keepAliveInterval: Double = StreamOptions.defaultKeepAliveInterval
    /// Seconds between sweeps for expired credentials.
    public var expirySweepInterval: Double = StreamOptions.defaultExpirySweepInterval

    public static let defaultMaxStreams = 15_000
    public static let defaultMaxStreamsPerAddress = 1_000
    public static let defaultMaxPendingChanges = 1_024
    public static let defaultMaxQueuedBytes = 1024 * 1024
    public static let defaultMaxReplayChanges = 10_000
    public static let defaultMaxReplayBytes = 1024 * 1024
    public static let defaultMaxQueryChildrenReread = 1_000
    public static let defaultMaxTrackedWindowKeys = 4_096
    public static let defaultKeepAliveInterval: Double = 30
    public static let defaultExpirySweepInterval: Double = 1

    public init() {}
}
