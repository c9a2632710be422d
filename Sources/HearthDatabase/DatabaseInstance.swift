import Dispatch
import HearthJSON
import HearthRules
import HearthStore
import HearthStreams
import Logging
import Synchronization

/// Told of what commits in one database, after its listens: triggers today, a profiler or
/// a push relay later. Registered with `DatabaseInstance.addCommitObserver`.
public protocol CommitObserver: AnyObject, Sendable {
    /// Every committed batch once it is durable (`EngineHooks.onDurable`), in commit order,
    /// before any write of it is acknowledged: keep it short.
    func committed(_ changes: [Change])
    /// What a write by `caller` causes beside itself, recorded in its own transaction
    /// (trigger events); nil: nothing.
    func effects(for caller: Caller) -> WriteEffects?
}

extension CommitObserver {
    public func effects(for caller: Caller) -> WriteEffects? { nil }
}

/// One database, assembled and owned in one place: its store (opened with hooks that feed
/// its listens and then its commit observers), the transport-neutral `Database` over it,
/// its stream hub and listens, read cache, onDisconnect ledger, its rules and their
/// history, its housekeeping timers, and `close`. A server holds one per namespace; the
/// transports are adapters over `database` and `listens`. It knows no engine: the caller
/// passes the closure that opens the store, and no transport nor account.
public final class DatabaseInstance: Sendable {
    /// The store's type, for callers that name it without importing the store module.
    public typealias Store = any StorageEngine

    public let store: any StorageEngine
    public let database: Database
    public let listens: ListenAccess
    public let readCache: ReadCache
    public let ledger: OnDisconnectLedger
    public let policy: RulesAccessPolicy
    public let history: RulesHistory
    private let observers: CommitObservers
    private let timers = Mutex<[DispatchSourceTimer]>([])
    private let logger: Logger

    /// The callbacks of the store's hooks that are not the instance's own (commit
    /// timings, storage space, a shared engine's feed gaps and lease); `watch` and
    /// `onCommit` are set by the instance.
    public typealias Signals = EngineHooks

    /// Opens one database.
    /// - Parameters:
    ///   - rules: the running rules and their text (recorded in the history as found at startup).
    ///   - recordsRulesCoverage: decide with the rules compiled for coverage and count
    ///     every evaluation (`RulesAccessPolicy.coverage`).
    ///   - hub: its live streams.
    ///   - readCacheBytes: the read cache's budget (0: none; a shared engine keeps none).
    ///   - signals: the store's other hooks (`Signals`).
    ///   - profiler: its profiler (the stream hub's fan-out may report to it too).
    ///   - open: opens the store with the hooks given.
    ///   - registrantStands: given the open store, whether an onDisconnect operation's
    ///     registrant may still act; it may throw (the store is then closed).
    public init(rules: RuleSet, rulesText: String, hub: StreamHub, readCacheBytes: Int, signals: Signals = Signals(), recordsRulesCoverage: Bool = false,
                clock: @escaping @Sendable () -> Int64 = WallClock.milliseconds, logger: Logger, profiler: Profiler = Profiler(),
                open: (EngineHooks) throws -> any StorageEngine,
                registrantStands: (any StorageEngine) throws -> @Sendable (Caller) -> Bool) throws {
        let policy = RulesAccessPolicy(rules: rules, clock: clock, logger: logger, recordsCoverage: recordsRulesCoverage, profiler: profiler)
        let readCache = ReadCache(maxBytes: readCacheBytes)
        let listens = ListenAccess(hub: hub, policy: policy, readCache: readCache.isEnabled ? readCache : nil)
        let observers = CommitObservers()
        var hooks = signals
        hooks.watch = listens.watchedLocations(below:)
        hooks.onCommit = { changes, view in listens.committed(changes, view: view) }
        hooks.onDurable = { changes in
            for observer in observers.current { observer.committed(changes) }
        }
        let store = try open(hooks)
        let stands: @Sendable (Caller) -> Bool
        do {
            stands = try registrantStands(store)
        } catch {
            store.close()
            throw error
        }
        let effects: Database.EffectsProvider = { caller in
            for observer in observers.current {
                if let effects = observer.effects(for: caller) { return effects }
            }
            return nil
        }
        let database = Database(store: store, policy: policy, readCache: readCache, effects: effects, profiler: profiler)
        (self.policy, self.readCache, self.listens, self.observers, self.store, self.database) =
            (policy, readCache, listens, observers, store, database)
        self.logger = logger
        history = RulesHistory(records: store.consoleRecords, clock: clock, logger: logger)
        history.record(rulesText, by: .fileAtStartup)
        ledger = OnDisconnectLedger(records: store.onDisconnectRecords, database: database, registrantStands: stands)
        // Operations of connections open when the server last stopped (a crash, a kill) run
        // now, before anyone connects.
        do {
            let ran = try ledger.runLeftovers()
            if ran > 0 { logger.info("ran \(ran) onDisconnect operations left by connections open when Hearth last stopped") }
        } catch {
            logger.error("cannot read the pending onDisconnect operations: \(error)")
        }
    }

    /// `observer` is told of every commit from now on, after the listens; the first
    /// observer that has effects for a write supplies them.
    public func addCommitObserver(_ observer: any CommitObserver) {
        observers.list.withLock { $0.append(observer) }
    }

    /// Removes `observer` (by identity).
    func removeCommitObserver(_ observer: any CommitObserver) {
        observers.list.withLock { $0.removeAll { $0 === observer } }
    }

    public var commitObserverCount: Int { observers.current.count }

    /// Swaps the running rules for `rules`, records `text` in their history under
    /// `author`, and re-decides every open listen (those that lost read access get
    /// `cancel`). Every change of the rules comes here; the caller serialises them when it
    /// also writes a file, so the history's order is the order the rules ran in.
    public func replaceRules(_ rules: RuleSet, text: String, by author: RulesHistory.Author) {
        policy.replace(rules)
        history.record(text, by: author)
        listens.reviewAccess(in: store)
    }

    /// The store's size on disk, when known.
    public var storageBytes: Int64 { store.storageBytes() ?? 0 }
    public var isStorageFull: Bool { store.isStorageFull }
    public var isShared: Bool { store.isShared }

    /// What `startHousekeeping` runs, and how often.
    public struct Housekeeping: Sendable {
        /// Seconds between revocation sweeps of the open listens.
        public var revocationCheckEvery: Double
        /// Where the sweeps run (they may read accounts).
        public var queue: DispatchQueue
        /// Whether a user's credential issued at a time still holds.
        public var isStillValid: @Sendable (_ uid: String, _ issuedAt: Int64) -> Bool
        /// Seconds between change-log trims.
        public var changeLogTrimEvery: Double
        /// Seconds between runs of the onDisconnect operations of stopped nodes (shared engine only).
        public var orphanCheckEvery: Double
        /// Told of each such run: how many ran, or why it failed.
        public var orphansRan: @Sendable (Result<Int, any Error>) -> Void

        public init(revocationCheckEvery: Double, queue: DispatchQueue,
                    isStillValid: @escaping @Sendable (_ uid: String, _ issuedAt: Int64) -> Bool,
                    changeLogTrimEvery: Double, orphanCheckEvery: Double,
                    orphansRan: @escaping @Sendable (Result<Int, any Error>) -> Void = { _ in }) {
            (self.revocationCheckEvery, self.queue, self.isStillValid) = (revocationCheckEvery, queue, isStillValid)
            (self.changeLogTrimEvery, self.orphanCheckEvery, self.orphansRan) = (changeLogTrimEvery, orphanCheckEvery, orphansRan)
        }
    }

    /// Starts the stream sweeps (keep-alives, expiry, revocation), change-log trims and, on
    /// a shared engine, the onDisconnect operations of nodes whose lease expired.
    public func startHousekeeping(_ plan: Housekeeping) {
        listens.startSweeps(revocationCheckEvery: plan.revocationCheckEvery, on: plan.queue, isStillValid: plan.isStillValid)
        let (store, ledger) = (self.store, self.ledger)
        timers.withLock { timers in
            timers.append(Self.timer(every: plan.changeLogTrimEvery, on: DispatchQueue.global(qos: .utility)) {
                store.trimChangeLog()
            })
            if store.isShared {
                timers.append(Self.timer(every: plan.orphanCheckEvery, on: DispatchQueue.global(qos: .utility)) {
                    plan.orphansRan(Result { try ledger.runLeftovers() })
                })
            }
        }
    }

    /// Timers running now (tests: `close` stops them).
    var runningTimers: Int { timers.withLock { $0.count } }

    /// Stops the housekeeping and the listens, forgets the observers, closes the store.
    public func close() {
        timers.withLock { timers in
            for timer in timers { timer.cancel() }
            timers = []
        }
        listens.stop()
        observers.list.withLock { $0 = [] }
        store.close()
    }

    /// A repeating timer on `queue`, every `seconds` (at least 1 ms).
    public static func timer(every seconds: Double, on queue: DispatchQueue,
                             _ body: @escaping @Sendable () -> Void) -> DispatchSourceTimer {
        StreamHub.timer(every: seconds, on: queue, leewayDivisor: 10, body)
    }
}

/// The commit observers of one instance, shared by its store's commit hook and its write
/// effects (a reference, so both closures see registrations made after the store opened).
private final class CommitObservers: Sendable {
    let list = Mutex<[any CommitObserver]>([])
    var current: [any CommitObserver] { list.withLock { $0 } }
}
