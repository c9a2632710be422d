import Dispatch
import HearthStore
import HearthSystem
import Synchronization

/// One node's view of the change feed: delivers every committed change, from
/// any node, to this node's `onCommit` exactly once and in number order.
///
/// Delivery reads `changes` rows numbered after the last one delivered, in a REPEATABLE
/// READ snapshot that also serves as the view handed to `onCommit` (so a stream's access
/// re-check sees the data as of that snapshot, which includes the changes delivered).
/// A read that delivered something leaves its snapshot open, and the next read sends its
/// COMMIT in the same exchange as its own BEGIN and reads: one exchange per read, not two.
/// A read that found nothing new commits at once, so a snapshot stays open at most until
/// the listener's next poll (`pollMilliseconds`) after the last change delivered.
/// Numbers are assigned under the write lock (`PostgresEngine`), so when change N is
/// visible every change before it is too: reading "after the last delivered" never skips
/// one. `LISTEN` is only a wake-up; a listener that lost its connection falls back on
/// polling every `pollMilliseconds` until it is back.
///
/// `@unchecked Sendable`: `connection` and `delivered` are touched only on `queue`; the
/// listener connection only on the listening thread; `running` is atomic.
final class ChangeFeed: @unchecked Sendable {
    /// The default namespace's channel; another namespace's is its schema's name,
    /// so a commit wakes only the feeds of its own namespace.
    static let defaultChannel = "hearth_changes"
    /// This feed's channel (`channel(of:)`).
    let channel: String
    /// How long the listener waits for a wake-up before it looks anyway, ms.
    static let pollMilliseconds: Int32 = 500
    /// Changes read per query while catching up.
    static let batchRows = 1_000

    private let url: String
    private let onCommit: @Sendable ([Change], any TreeView) -> Void
    private let onGap: @Sendable (Int64, Int64) -> Void
    private let queue = DispatchQueue(label: "hearth.postgres.feed")
    private var connection: PGConnection?  // confined to queue
    private var delivered: Int64 = 0  // confined to queue
    /// Whether `connection` holds the snapshot of the last read, still open (confined to queue).
    private var snapshotOpen = false
    private let listenerThread = DispatchQueue(label: "hearth.postgres.listen")
    /// The listener's first connection, opened in `init` so that a node short of
    /// connections learns it at start (`PostgresEngine.connections(for:)`); after `init`
    /// touched only on the listening thread, which takes it over.
    private var firstListener: PGConnection?
    private let running = Atomic<Bool>(false)
    private let stopped = DispatchSemaphore(value: 0)
    /// Set while a test holds delivery back (a node that fell behind).
    private var paused = false  // confined to queue

    init(url: String, onCommit: @escaping @Sendable ([Change], any TreeView) -> Void,
         onGap: @escaping @Sendable (Int64, Int64) -> Void = { _, _ in }) throws(StoreError) {
        self.url = url
        self.onCommit = onCommit
        self.onGap = onGap
        let connection = try PGConnection(url: url)
        let last = try connection.query("SELECT value FROM hearth_meta WHERE key = 'last_seq'")
        self.delivered = last.rowCount > 0 ? last.int64(0, 0) : 0
        self.connection = connection
        self.channel = try Self.channel(of: connection)
        let listener = try PGConnection(url: url)
        try listener.listen(channel)
        self.firstListener = listener
    }

    /// The channel of the namespace `connection`'s session is in: its schema's name when its
    /// `search_path` is a namespace's schema, else the default's.
    static func channel(of connection: PGConnection) throws(StoreError) -> String {
        let path = try connection.query("SELECT current_setting('search_path')").text(0, 0)
        return path.hasPrefix(PostgresSchema.namespaceSchemaPrefix) && (try? PGConnection.validate(channel: path)) != nil
            ? path : defaultChannel
    }

    /// The last change delivered here.
    var deliveredSeq: Int64 { queue.sync { delivered } }

    /// Starts listening for other nodes' commits.
    func start() {
        running.store(true, ordering: .sequentiallyConsistent)
        listenerThread.async { self.listen() }
    }

    func stop() {
        guard running.exchange(false, ordering: .sequentiallyConsistent) else { return }
        stopped.wait()
        queue.sync { (connection, snapshotOpen) = (nil, false) }
    }

    private func listen() {
        var listener = firstListener
        firstListener = nil
        while running.load(ordering: .sequentiallyConsistent) {
            var payloads: [String] = []
            do {
                if listener == nil || listener?.isBroken == true {
                    let fresh = try PGConnection(url: url)
                    try fresh.listen(self.channel)
                    listener = fresh
                }
                payloads = try listener?.waitForNotification(timeoutMilliseconds: Self.pollMilliseconds) ?? []
            } catch {
                listener = nil
                // Cannot reach the database: poll (below) until it is back, a pause apart.
                Syscall.sleep(seconds: Double(Self.pollMilliseconds) / 1000)
            }
            guard running.load(ordering: .sequentiallyConsistent) else { break }
            queue.sync {
                // A wake-up for changes delivered already (this node's own batches, which
                // its writer delivered before acknowledging them) needs no read.
                if !Self.announcesNothingNew(payloads, delivered: delivered) { catchUp(local: []) }
            }
        }
        stopped.signal()
    }

    /// Whether the wake-ups' `payloads` (each a batch's last number) are all at most
    /// `delivered`; false for none (a poll) or one that is not a number.
    static func announcesNothingNew(_ payloads: [String], delivered: Int64) -> Bool {
        !payloads.isEmpty && payloads.allSatisfy { Int64($0).map { $0 <= delivered } ?? false }
    }

    /// Exchanges on the feed's reading connection so far (`PGConnection.exchanges`).
    func exchangesForTesting() -> Int {
        queue.sync { connection?.exchanges ?? 0 }
    }

    /// The server process of the feed's reading session (tests look at its state and end it).
    func sessionForTesting() throws -> Int64 {
        try queue.sync { () throws -> Int64 in
            guard let connection else { throw StoreError.corrupt("the feed is stopped") }
            return try connection.query("SELECT pg_backend_pid()").int64(0, 0)
        }
    }

    /// Delivers every change up to at least `seq` (the writer's batch, whose live records
    /// in `local` carry what only the writer knows), then returns.
    func deliver(through seq: Int64, local: [Change]) {
        queue.sync {
            if delivered >= seq { return }
            catchUp(local: local)
        }
    }

    /// Holds delivery back (true) or lets it go on, catching up at once (false): a test
    /// stands in for a node that falls behind.
    func setPausedForTesting(_ pause: Bool) {
        queue.sync {
            paused = pause
            if !pause { catchUp(local: []) }
        }
    }

    /// Reads and delivers what is newer than `delivered` (on `queue`).
    private func catchUp(local: [Change]) {
        if paused { return }
        let byNumber = Dictionary(local.map { ($0.seq, $0) }, uniquingKeysWith: { first, _ in first })
        // A session the server ended while a snapshot was open (a restart, a failover, its
        // idle-in-transaction timeout) is not seen by `isBrokenNow`, which probes only idle
        // sessions: the read fails on it, and is made once more on a new session.
        var mayReconnect = snapshotOpen
        while true {
            do {
                if connection == nil || connection?.isBrokenNow == true {
                    (snapshotOpen, mayReconnect) = (false, false)  // one attempt to connect per catch-up
                    connection = try PGConnection(url: url)
                }
                guard let connection else { return }
                if try !readOnce(connection, byNumber: byNumber) { return }
            } catch {
                // Retried at the next wake-up or poll, unless the session was found gone.
                guard mayReconnect, connection?.isBroken == true else { return }
                mayReconnect = false
            }
        }
    }

    /// One read: the previous read's COMMIT when its snapshot is still open, a new snapshot
    /// and the changes after `delivered` in it, in one exchange; the changes are handed on
    /// with a view of that snapshot, which stays open. Returns whether more may be waiting
    /// (a full page).
    private func readOnce(_ connection: PGConnection, byNumber: [Int64: Change]) throws(StoreError) -> Bool {
        let closing: [PGConnection.Statement] = snapshotOpen ? [.init(sql: "COMMIT")] : []
        let read = connection.runPipelined(closing + [.init(sql: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"), .init(sql: PostgresTreeView.oldestChangeSQL),
                                                      .init(sql: PostgresTreeView.changesAfterSQL, params: [.int(delivered), .int(Int64(Self.batchRows))])])
        let at = closing.count
        do throws(StoreError) {
            if let failure = read.failure { throw failure }
            snapshotOpen = true
            let (changes, oldest) = try PostgresTreeView.changes(read.results[at + 2], oldest: read.results[at + 1])
            if let oldest, oldest > delivered + 1, let first = changes.first, first.seq == oldest {
                // Trimmed before this node read them: numbers are gap-free, so
                // everything from `delivered + 1` to just before the oldest is gone.
                onGap(delivered + 1, oldest - 1)
            }
            if changes.isEmpty {
                // Nothing new (a poll, or a wake-up for what was delivered): no snapshot is
                // left open while the feed is idle.
                snapshotOpen = false
                try connection.execute("COMMIT")
                return false
            }
            onCommit(changes.map { byNumber[$0.seq] ?? $0 }, PostgresTreeView(connection: connection))
            delivered = changes[changes.count - 1].seq
            return changes.count == Self.batchRows
        } catch {
            // Ends whichever transaction is open, if any: the old one when its COMMIT
            // failed, the new one when a read did.
            snapshotOpen = false
            try? connection.execute("ROLLBACK")
            throw error
        }
    }
}

/// This node's lease in `hearth_nodes`, renewed in the background. When a node stops
/// renewing (it died), its lease runs out and the onDisconnect operations of its
/// connections are taken over by a live node (`PostgresOnDisconnectRecords.orphans`).
///
/// A node that is alive but cannot reach the database (a partition, a long pause) fences
/// itself: once `leaseSafetyMarginMilliseconds` before the lease it last renewed runs out,
/// it tells its server (`onLost`, which closes the client connections holding onDisconnect
/// operations without running them, since another node will) and takes a new node id.
/// Records are refused while no lease under the current id is held (`isHeld`), so a
/// connection that arrives meanwhile cannot leave records another node would take at once.
///
/// `@unchecked Sendable`: the timer is made in `init` and only activated and cancelled
/// afterwards, which dispatch sources allow from any thread; the state is in a `Mutex`,
/// the flags are atomic.
final class NodeLease: @unchecked Sendable {
    private struct State {
        var id: String
        /// The end of the lease last renewed under `id` (this node's clock, ms); 0: none.
        var validUntil: Int64
        /// A lease was lost since one was last taken (`onRegained` is due at the next).
        var lostSinceTaken = false
    }

    private let state: Mutex<State>
    private let clock: @Sendable () -> Int64
    private let slot: PostgresSlot
    private let onLost: @Sendable () -> Void
    private let onRegained: @Sendable () -> Void
    private let timer: DispatchSourceTimer
    /// The fence check, on a timer of its own: a renewal may hang on an unreachable database.
    private let checker: DispatchSourceTimer
    private let started = Atomic<Bool>(false)
    private let renewing = Atomic<Bool>(false)

    /// Whether leases are stored and judged on the database's clock (else on `clock`).
    let databaseTime: Bool

    init(clock: @escaping @Sendable () -> Int64, databaseTime: Bool, slot: PostgresSlot, onLost: @escaping @Sendable () -> Void = {},
         onRegained: @escaping @Sendable () -> Void = {}) {
        self.state = Mutex(State(id: PostgresEngine.randomID(), validUntil: 0))
        self.clock = clock
        self.databaseTime = databaseTime
        self.slot = slot
        self.onLost = onLost
        self.onRegained = onRegained
        self.timer = DispatchSource.makeTimerSource(queue: DispatchQueue.global(qos: .utility))
        self.checker = DispatchSource.makeTimerSource(queue: DispatchQueue.global(qos: .utility))
    }

    /// The id this node's records and lease carry now.
    var nodeID: String { state.withLock { $0.id } }

    /// Whether a lease under the current id is held with the safety margin to spare.
    var isHeld: Bool {
        let now = clock()
        return state.withLock { now < $0.validUntil - PostgresEngine.leaseSafetyMarginMilliseconds }
    }

    /// The database's time, ms since the epoch (`clock_timestamp()`, not the transaction's
    /// start): leases are stored and judged in it, so the nodes' clocks decide nothing.
    static let databaseNow = "(extract(epoch from clock_timestamp()) * 1000)::bigint"

    /// A time parameter `$n`: the node's clock when given (tests with a clock of their own),
    /// else the database's (`databaseNow`).
    static func now(_ parameter: Int) -> String { "COALESCE($\(parameter)::bigint, \(databaseNow))" }

    /// The time a statement passes for "now" (`now(_:)`): null on the database's clock.
    var nowParameter: PGValue { databaseTime ? .null : .int(clock()) }

    /// Registers the lease of a new id, or extends the current one. A lease is extended
    /// only while its row is there and has not run out (`extendSQL`): once another node
    /// may have taken it over (it deleted the row, or could at any moment), the id is never
    /// brought back; the node fences itself at once (`onLost`) and goes on under a new id.
    func renew() throws {
        let now = clock()
        let (id, fresh, until) = state.withLock { ($0.id, $0.validUntil == 0, now + PostgresEngine.leaseMilliseconds) }
        // On the database's clock the row gets its own time plus the lease; `until` (this
        // node's clock, from before sending) is what the node itself counts on.
        let (stored, at): (PGValue, PGValue) = databaseTime ? (.null, .null) : (.int(until), .int(now))
        let kept: Bool = try slot.queue.sync {
            try slot.withConnection { connection in
                if fresh {
                    // A new random id: no other node knows it, so none can have taken it.
                    _ = try connection.query("""
                        INSERT INTO hearth_nodes(id, lease_until) VALUES ($1, COALESCE($2::bigint, \(Self.databaseNow) + \(PostgresEngine.leaseMilliseconds)))
                        ON CONFLICT (id) DO UPDATE SET lease_until = excluded.lease_until
                        """, [.text(id), stored])
                    return true
                }
                return try connection.query(Self.extendSQL, [.text(id), stored, at]).affectedRows > 0
            }
        }
        guard kept else {
            _ = lose(id)
            return
        }
        // Counted from before the statement was sent: the database may have stored it at
        // any moment since, so the lease is certain only from then on.
        let regained = state.withLock { state -> Bool in
            guard state.id == id else { return false }
            state.validUntil = max(state.validUntil, until)
            defer { state.lostSinceTaken = false }
            return state.lostSinceTaken
        }
        if regained { onRegained() }
    }

    /// Extends lease $1 to $2 if it is still live at $3 (a row lock: it waits for a node
    /// taking it over, and then finds the row gone).
    static let extendSQL = "UPDATE hearth_nodes SET lease_until = COALESCE($2::bigint, \(databaseNow) + \(PostgresEngine.leaseMilliseconds)) "
        + "WHERE id = $1 AND lease_until >= \(now(3))"

    /// Whether lease $1 is live at $2, holding its row (`FOR KEY SHARE`) until the
    /// transaction ends: a node that would take it over (`orphans`, which deletes the row)
    /// waits until then, so what the transaction did under the lease commits before the
    /// take-over, or not at all. This is the fence every lease-dependent transaction asks.
    static let liveSQL = "SELECT 1 FROM hearth_nodes WHERE id = $1 AND lease_until >= \(now(2)) FOR KEY SHARE"

    /// Gives up lease `id` (if it is still the current one): a new id, and `onLost`. True
    /// when it did.
    private func lose(_ id: String) -> Bool {
        let lost = state.withLock { state -> Bool in
            guard state.id == id else { return false }
            state = State(id: PostgresEngine.randomID(), validUntil: 0, lostSinceTaken: true)
            return true
        }
        if lost { onLost() }
        return lost
    }

    /// Fences this node if its lease may be about to run out (see the type's comment).
    /// True when it did.
    @discardableResult
    func check() -> Bool {
        let now = clock()
        let expiring = state.withLock { state -> String? in
            guard state.validUntil > 0, now >= state.validUntil - PostgresEngine.leaseSafetyMarginMilliseconds else { return nil }
            return state.id
        }
        guard let expiring else { return false }
        return lose(expiring)
    }

    /// A renewal, unless one is still running (a statement to an unreachable database can
    /// take long; ticks must not pile up).
    private func tick() {
        guard !renewing.exchange(true, ordering: .sequentiallyConsistent) else { return }
        defer { renewing.store(false, ordering: .sequentiallyConsistent) }
        try? renew()
    }

    func start() {
        guard !started.exchange(true, ordering: .sequentiallyConsistent) else { return }
        let nanos = Int(PostgresEngine.leaseRenewSeconds * 1e9)
        timer.schedule(deadline: .now() + .nanoseconds(nanos), repeating: .nanoseconds(nanos), leeway: .milliseconds(100))
        timer.setEventHandler { [weak self] in self?.tick() }
        timer.activate()
        let checkNanos = Int(PostgresEngine.leaseCheckMilliseconds) * 1_000_000
        checker.schedule(deadline: .now() + .nanoseconds(checkNanos), repeating: .nanoseconds(checkNanos), leeway: .milliseconds(20))
        checker.setEventHandler { [weak self] in
            guard let self else { return }
            self.check()
            // Without a lease the node refuses writes: take one as soon as the database
            // answers, not at the next renewal.
            if self.state.withLock({ $0.validUntil == 0 }) { self.tick() }
        }
        checker.activate()
    }

    deinit {
        // An inactive source must not be released: activate it cancelled.
        timer.cancel()
        checker.cancel()
        if !started.load(ordering: .sequentiallyConsistent) {
            timer.activate()
            checker.activate()
        }
    }

    /// Stops renewing and checking (for good).
    func stop() {
        if !timer.isCancelled { timer.cancel() }
        if !checker.isCancelled { checker.cancel() }
    }
}
