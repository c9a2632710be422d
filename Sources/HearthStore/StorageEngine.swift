import HearthJSON

/// What the composition root hands an engine to hear of its commits (docs/design.md §3):
/// the same hooks for every engine.
public struct EngineHooks: Sendable {
    /// Locations strictly below a write's path that someone listens to (nil: too many).
    public var watch: (@Sendable (DataPath) -> [DataPath]?)?
    /// Told of each committed batch: its writes and how long the commit took.
    public var observeCommit: (@Sendable (_ writes: Int, _ nanoseconds: UInt64) -> Void)?
    /// Told how long each sync that made committed batches durable took (an engine that
    /// syncs its own log after the commit: SQLite with `synchronous=full`).
    public var observeSync: (@Sendable (_ nanoseconds: UInt64) -> Void)?
    /// Told of each write the writer took, when it is answered: how long it waited for its
    /// batch to start, and how long from joining the writer's queue to its answer.
    public var observeWrite: (@Sendable (_ waited: UInt64, _ answered: UInt64) -> Void)?
    /// Told of writes refused for lack of space (engines that watch a local volume).
    public var observeStorage: @Sendable (StorageEvent) -> Void
    /// Every committed change, in commit order, before any write of it is acknowledged on
    /// this node, with a view of the data at (or, on a shared engine, just after) it.
    public var onCommit: @Sendable ([Change], any TreeView) -> Void
    /// The same changes once they are durable, in commit order, after `onCommit` and
    /// before any write of them is acknowledged: what acts outside Hearth on a change (a
    /// trigger's delivery) waits for this, so it never acts on a change a power loss could
    /// take back. An engine whose commit is durable calls it right after `onCommit`.
    public var onDurable: @Sendable ([Change]) -> Void
    /// A shared engine only: changes `first...last` were trimmed from the change log before
    /// this node delivered them (it fell further behind than the log's window). Streams on
    /// this node missed them and must start over; `onCommit` goes on after them.
    public var onFeedGap: @Sendable (_ first: Int64, _ last: Int64) -> Void
    /// A shared engine only: this node could not renew its lease in time, so other nodes
    /// may already run the onDisconnect operations of its connections. Every client
    /// connection that registered some must be closed without running them; the engine
    /// goes on under a new node id once the database answers again.
    public var onLeaseLost: @Sendable () -> Void
    /// A shared engine only: after `onLeaseLost`, the node holds a lease again (under a new
    /// id) and takes writes and onDisconnect registrations again.
    public var onLeaseRegained: @Sendable () -> Void

    public init(watch: (@Sendable (DataPath) -> [DataPath]?)? = nil,
                observeCommit: (@Sendable (_ writes: Int, _ nanoseconds: UInt64) -> Void)? = nil,
                observeSync: (@Sendable (_ nanoseconds: UInt64) -> Void)? = nil,
                observeWrite: (@Sendable (_ waited: UInt64, _ answered: UInt64) -> Void)? = nil,
                observeStorage: @escaping @Sendable (StorageEvent) -> Void = { _ in },
                onCommit: @escaping @Sendable ([Change], any TreeView) -> Void = { _, _ in },
                onDurable: @escaping @Sendable ([Change]) -> Void = { _ in },
                onFeedGap: @escaping @Sendable (_ first: Int64, _ last: Int64) -> Void = { _, _ in },
                onLeaseLost: @escaping @Sendable () -> Void = {},
                onLeaseRegained: @escaping @Sendable () -> Void = {}) {
        (self.watch, self.observeCommit, self.observeStorage, self.onCommit) = (watch, observeCommit, observeStorage, onCommit)
        self.onDurable = onDurable
        self.observeSync = observeSync
        self.observeWrite = observeWrite
        (self.onFeedGap, self.onLeaseLost, self.onLeaseRegained) = (onFeedGap, onLeaseLost, onLeaseRegained)
    }
}

/// One storage engine: the tree and its change feed, accounts, the console's
/// records, the wire protocol's onDisconnect operations and the signing keys. Everything
/// above the store modules reaches the data through this protocol; only the engine's own
/// module (HearthSQLite, HearthPostgres) knows its database.
public protocol StorageEngine: TreeStore {
    /// "sqlite" or "postgres".
    var engineName: String { get }
    /// True when several Hearth nodes share the data: per-node caches of data must not
    /// answer reads, and leftover onDisconnect operations belong to nodes, not to the last run.
    var isShared: Bool { get }
    var accountStore: any AccountStore { get }
    var consoleRecords: any ConsoleRecords { get }
    var onDisconnectRecords: any OnDisconnectRecords { get }
    var signingKeys: any SigningKeyStore { get }
    /// The events writes caused (docs/design.md §11), for the triggers' delivery.
    var triggerOutbox: any TriggerOutbox { get }
    /// Rate-limit counters every node shares; nil when the process's own memory is the
    /// only place attempts arrive (one node).
    var limitCounters: (any LimitCounters)? { get }

    /// Runs `body` on one consistent state of the tree, blocking the caller (tools, the CLI).
    func readSync<T>(_ body: (any TreeView) throws -> T) throws -> T
    /// Writes and waits for the commit (tools, the CLI). Not on the engine's own queues.
    /// Every engine has it from `write` (the extension below).
    @discardableResult
    func writeSync(_ operation: WriteOperation, check: WriteCheck?) throws(WriteFailure) -> WriteOutcome
    /// Change-feed records newer than `after`, oldest first, and the oldest the feed holds.
    func changes(after: Int64, limit: Int) throws -> (changes: [Change], oldestSeq: Int64?)
    /// Trims the change feed by count and age; returns the records deleted.
    @discardableResult func trimChangeLog() -> Int
    /// True while writes are refused for lack of space.
    var isStorageFull: Bool { get }
    /// The bytes the data takes (`hearth_database_bytes`), nil when unknown.
    func storageBytes() -> Int64?
    /// Finishes queued writes and closes; later calls fail with `.closed`.
    func close()
}

extension StorageEngine {
    /// Writes through `write` and waits for its completion (tools, tests and the CLI). Do
    /// not call on the engine's writer queue.
    @discardableResult
    public func writeSync(_ operation: WriteOperation, check: WriteCheck? = nil) throws(WriteFailure) -> WriteOutcome {
        try PendingWrites.waitFor { write(operation, check: check, completion: $0) }
    }
}

/// The console's administrators, sessions and rules history.
public protocol ConsoleRecords: Sendable {
    func admin(email: String) throws -> ConsoleStore.Admin?
    func admins() throws -> [ConsoleStore.Admin]
    /// Throws `ConsoleStore.Failure.exists` for a taken email.
    func insert(_ admin: ConsoleStore.Admin) throws
    /// Throws `ConsoleStore.Failure.notFound`; ends the admin's sessions.
    func setPassword(email: String, hash: String, at time: Int64) throws
    /// Throws `ConsoleStore.Failure.notFound`; ends the admin's sessions.
    func remove(email: String) throws
    func addSession(_ session: ConsoleStore.SessionRecord) throws
    func session(hash: String) throws -> ConsoleStore.SessionRecord?
    func touchSession(hash: String, at time: Int64) throws
    func endSession(hash: String) throws
    func pruneSessions(idleBefore: Int64, createdBefore: Int64) throws
    func recordRules(_ text: String, by email: String, at time: Int64, keep: Int) throws
    func rulesHistory() throws -> [ConsoleStore.RulesVersion]
}

/// The wire protocol's onDisconnect operations, persisted so that those of a connection
/// whose server died still run, on another node when several share a database.
public protocol OnDisconnectRecords: Sendable {
    func add(_ record: OnDisconnectRecord) throws
    func remove(session: String, positions: [Int64]) throws
    func removeAll(session: String) throws
    /// The records whose server is gone, now this node's to run and remove: with one
    /// server, every record left at start; with several, those of nodes whose lease
    /// expired. One page at a time, so a caller holds a page and not every record: whole
    /// sessions whose id sorts after `after` (from the first when nil), in session order,
    /// each while the stored bytes (operation and caller) of those before it in the page
    /// are under `bytes`, and always the first; every record of each, by position. Empty
    /// when none are left; the next page starts after the last session of this one.
    func orphans(after: String?, bytes: Int) throws -> [OnDisconnectRecord]
    /// The lease this node's records and writes are fenced with now (`WriteFence`); nil
    /// with one node.
    var leaseEpoch: String? { get }
    /// A reconnecting client named `session`, which may live on another node: its records,
    /// wherever they are, become this node's to run now (nothing with one node, whose
    /// sessions are all in memory).
    func claim(session: String) throws -> [OnDisconnectRecord]
}

extension OnDisconnectRecords {
    public var leaseEpoch: String? { nil }
    public func claim(session: String) throws -> [OnDisconnectRecord] { [] }
}

/// The Ed25519 signing keys (docs/design.md §6): base64 raw private keys by `kid`, and
/// which one signs. Older keys keep verifying.
public struct StoredSigningKeys: Sendable, Equatable {
    public var current: String
    public var keys: [String: String]
    public init(current: String, keys: [String: String]) {
        (self.current, self.keys) = (current, keys)
    }
}

public protocol SigningKeyStore: Sendable {
    /// The keys, nil when there are none yet.
    func load() throws -> StoredSigningKeys?
    /// Stores a new key (base64 raw private key) and makes it the signing key.
    func add(kid: String, privateKey: String) throws
    /// Whether a key named `kid` is stored (a rotation elsewhere), cheaply.
    func contains(kid: String) -> Bool
}

/// One rate-limit counter (a window's start and count, or failures and the last one).
/// A record equal to `LimitRecord()` is an absent one.
public struct LimitRecord: Sendable, Equatable {
    public var count: Int64
    public var start: Int64
    public var last: Int64
    public init(count: Int64 = 0, start: Int64 = 0, last: Int64 = 0) {
        (self.count, self.start, self.last) = (count, start, last)
    }
}

/// Rate-limit counters shared by every node, so a limit holds for the whole
/// deployment, not per node.
public protocol LimitCounters: Sendable {
    /// Applies `update` to the records of `keys` atomically across nodes (absent ones are
    /// `LimitRecord()`), stores what it leaves (a record set back to `LimitRecord()` is
    /// removed), and returns its result. `now` (seconds) lets stale records be pruned:
    /// none older than `keepSeconds` is needed.
    func update<R>(_ keys: [String], now: Int64, keepSeconds: Int64, _ update: (inout [String: LimitRecord]) -> R) throws -> R
}
