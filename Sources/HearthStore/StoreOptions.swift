/// How a storage engine runs (each reads the options that apply to it). Defaults follow
/// docs/design.md §4.
public struct StoreOptions: Sendable {
    /// SQLite's `synchronous` setting (the SQLite engine). `full` makes every acknowledged commit survive
    /// power loss (one fsync per batch thanks to group commit); `normal` may lose the last
    /// commits on power loss but never corrupts the file.
    public enum Synchronous: String, Sendable {
        case full = "FULL"
        case normal = "NORMAL"
    }

    /// Writes queued while a commit runs are committed together, up to this many per
    /// transaction (one fsync per batch).
    public static let defaultMaxBatchSize = 512
    /// Change-log rows kept for stream resume (docs/design.md §5); older rows are trimmed.
    public static let defaultChangeLogRetention = 100_000
    /// Seconds a change-log row is kept at most (docs/design.md §5: resume works while the
    /// log holds the missed changes). One week.
    public static let defaultChangeLogMaxAge: Double = 7 * 24 * 3600
    /// Seconds between background trims of the change log.
    public static let defaultChangeLogTrimInterval: Double = 60
    /// How long a connection waits for a lock held by another process before failing.
    public static let defaultBusyTimeoutMilliseconds = 5_000

    /// Most stored nodes (leaves and priorities) one write may write, and most it may
    /// replace or delete: the writer applies a write in one transaction, and every other
    /// write waits for it (a PUT of 10^6 leaves held it for about 5 s). 100,000 nodes take
    /// the writer a few hundred milliseconds (docs/bench/history.md, "Huge writes"); larger data
    /// goes in parts, or through `hearth import`.
    public static let defaultMaxNodesPerWrite = 100_000
    /// Children a query index's build reads per slice. Each slice is one transaction on
    /// the writer between write batches, so the writes waiting behind a build wait for one
    /// slice (about 10 ms at 1,000 children) rather than for the whole location (a location
    /// of 64,000 children held every write for most of a second in one transaction).
    public static let defaultQueryIndexChildrenPerSlice = 1_000

    public var synchronous: Synchronous = .full
    public var maxNodesPerWrite: Int = StoreOptions.defaultMaxNodesPerWrite
    public var queryIndexChildrenPerSlice: Int = StoreOptions.defaultQueryIndexChildrenPerSlice
    public var readerCount: Int = 2
    public var maxBatchSize: Int = StoreOptions.defaultMaxBatchSize
    public var changeLogRetention: Int = StoreOptions.defaultChangeLogRetention
    public var busyTimeoutMilliseconds: Int = StoreOptions.defaultBusyTimeoutMilliseconds
    public var changeLogMaxAge: Double = StoreOptions.defaultChangeLogMaxAge
    public var changeLogTrimInterval: Double = StoreOptions.defaultChangeLogTrimInterval

    public init() {}
}
