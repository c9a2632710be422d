import Dispatch
import HearthJSON
import HearthStore
import Synchronization

/// The tree, the change feed, accounts, keys and the console's records in one PostgreSQL
/// database that several Hearth nodes share (docs/scaling.md).
///
/// **Writes.** Each node has one writer connection and commits queued writes in batches
/// (group commit, as the SQLite engine). Every write transaction first updates the row
/// `hearth_meta.last_seq`, which locks it until the transaction ends: tree writes of all
/// nodes commit one at a time, each numbering its changes after the previous one's. So a
/// change's number is its commit order, every check (rules, compare-and-set, transactions)
/// reads the latest committed data, and multi-path updates are atomic across nodes.
///
/// **The change feed.** The numbered changes are rows of `changes`, written in the same
/// transaction. A transaction's `pg_notify` is delivered only after it commits and only
/// wakes the nodes up: each node's `ChangeFeed` reads the rows after the last number it
/// delivered, in order, so no change is skipped or delivered twice whichever order the
/// wake-ups come in. A node's own batch is delivered through the same feed (its changes
/// and every earlier one) before any of its writes is acknowledged.
///
/// `@unchecked Sendable`: each connection is confined to the queue that owns it (the
/// writer's, one per reader slot, the feed's); the pending writes and flags are in `Mutex`es.
public final class PostgresEngine: StorageEngine, @unchecked Sendable {
    public let url: String
    /// This node's id in `hearth_nodes` (128 random bits): its lease and onDisconnect
    /// records. A new one after the node lost its lease (`NodeLease`).
    public var nodeID: String { lease.nodeID }
    let options: StoreOptions
    let clock: @Sendable () -> Int64
    let hooks: EngineHooks

    let writerQueue = DispatchQueue(label: "hearth.postgres.writer")
    private var writer: PGConnection?  // confined to writerQueue
    /// The readers, each read going to an idle one (`ReaderPool`).
    private let readers: ReaderPool<PostgresSlot>
    /// Connections for accounts, console records, keys and onDisconnect records.
    private let aux: [PostgresSlot]
    private let nextAux = Atomic<Int>(0)
    let feed: ChangeFeed
    let lease: NodeLease

    let pending: PendingWrites  // internal: the readiness check (PostgresEngine+Lease.swift) asks whether it is closed
    private let beforeCommit: (@Sendable () -> Void)?
    private let answerOfCommitLost: (@Sendable () -> Bool)?
    let indexes = PostgresIndexMaintainer()  // confined to writerQueue
    /// Index builds asked for and not yet done ("location\u{0}spec").
    let indexRequests = Mutex<Set<String>>([])
    /// Index builds whose start came to nothing (another node builds it, no more indexes
    /// are allowed, or the start failed), and until when (`clock`) queries do not ask again.
    let indexRefusals = Mutex<[String: Int64]>([:])
    private typealias PendingWrite = PendingWrites.Write
    private var writesSinceTrim = 0  // confined to writerQueue

    /// Connections for accounts and the other records per node (readers: `StoreOptions.readerCount`).
    /// A node holds readers + this + 3 (writer, feed reader, listener) connections.
    public static let auxCount = 2

    /// The connections to PostgreSQL a node holds with `options`: the writer, the readers,
    /// `auxCount`, the change feed's reader and its listener (7 by default). The server's
    /// `max_connections` must leave this many for every node.
    public static func connections(for options: StoreOptions) -> Int {
        1 + max(1, options.readerCount) + auxCount + 2
    }

    /// Connects, migrates the schema (once, under an advisory lock), registers this node's
    /// lease and starts following the change feed from its current end.
    ///
    /// Leases are stored and judged on the database's clock; `leaseTimeFromDatabase` false
    /// puts them on `clock` (tests that move a clock of their own).
    public convenience init(url: String, options: StoreOptions = StoreOptions(),
                            clock: @escaping @Sendable () -> Int64 = WallClock.milliseconds,
                            hooks: EngineHooks = EngineHooks(), leaseTimeFromDatabase: Bool = true) throws(StoreError) {
        try self.init(url: url, options: options, clock: clock, hooks: hooks, beforeCommit: nil, leaseTimeFromDatabase: leaseTimeFromDatabase)
    }

    /// `beforeCommit` runs on the writer queue just before each batch's COMMIT (tests end
    /// the writer's session there to lose a commit's answer); `answerOfCommitLost` just
    /// after the COMMIT's exchange, and when it says true the engine drops every answer of
    /// that exchange (tests stand in for a connection lost after the COMMIT ran).
    init(url: String, options: StoreOptions, clock: @escaping @Sendable () -> Int64, hooks: EngineHooks,
         beforeCommit: (@Sendable () -> Void)?, answerOfCommitLost: (@Sendable () -> Bool)? = nil,
         leaseTimeFromDatabase: Bool = true) throws(StoreError) {
        self.beforeCommit = beforeCommit
        self.answerOfCommitLost = answerOfCommitLost
        self.url = url
        self.options = options
        self.pending = PendingWrites(options: options, observe: hooks.observeWrite)
        self.clock = clock
        self.hooks = hooks
        let writer = try PGConnection(url: url)
        try PostgresSchema.migrate(writer)
        self.writer = writer
        var readers: [PostgresSlot] = []
        for index in 0..<max(1, options.readerCount) {
            // Readers hold no locks, and an export's or a backup's snapshot stays open long.
            readers.append(try PostgresSlot(url: url, label: "hearth.postgres.reader.\(index)", idleInTransactionTimeout: 0))
        }
        self.readers = ReaderPool(readers)
        var aux: [PostgresSlot] = []
        for index in 0..<Self.auxCount { aux.append(try PostgresSlot(url: url, label: "hearth.postgres.aux.\(index)")) }
        self.aux = aux
        // What the feed delivers is committed in PostgreSQL, so durable: onDurable at once.
        self.feed = try ChangeFeed(url: url, onCommit: { hooks.onCommit($0, $1); hooks.onDurable($0) }, onGap: hooks.onFeedGap)
        self.lease = NodeLease(clock: clock, databaseTime: leaseTimeFromDatabase, slot: aux[0],
                               onLost: hooks.onLeaseLost, onRegained: hooks.onLeaseRegained)
        do {
            try lease.renew()
        } catch {
            throw error as? StoreError ?? .corrupt("cannot register this node: \(error)")
        }
        feed.start()
        lease.start()
    }

    deinit {
        feed.stop()
        lease.stop()
    }

    static func randomID() -> String {
        var generator = SystemRandomNumberGenerator()
        let high = generator.next() as UInt64
        let low = generator.next() as UInt64
        let hex = String(high, radix: 16) + "-" + String(low, radix: 16)
        return hex
    }

    public var engineName: String { "postgres" }
    public var isShared: Bool { true }

    // MARK: Reads

    public func read<T: Sendable>(
        _ body: @escaping @Sendable (any TreeView) throws -> T,
        completion: @escaping @Sendable (Result<T, any Error>) -> Void
    ) {
        let missing = missingIndex
        readers.async { slot in
            completion(Result { try slot.withConnection { connection in try Self.inSnapshot(connection, missing: missing, body) } })
        }
    }

    public func readSync<T>(_ body: (any TreeView) throws -> T) throws -> T {
        let missing = missingIndex
        return try readers.sync { slot in try slot.withConnection { connection in try Self.inSnapshot(connection, missing: missing, body) } }
    }

    /// Asks this node's writer to build an index a reader's query would have used.
    private var missingIndex: @Sendable (DataPath, String) -> Void {
        { [weak self] path, spec in self?.requestIndex(at: path, spec: spec) }
    }

    /// `body` on one snapshot of the database (REPEATABLE READ, read only).
    static func inSnapshot<T>(_ connection: PGConnection, missing: ((DataPath, String) -> Void)? = nil, _ body: (any TreeView) throws -> T) throws -> T {
        try connection.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        do {
            let result = try body(PostgresTreeView(connection: connection, onMissingIndex: missing))
            try connection.execute("COMMIT")
            return result
        } catch {
            try? connection.execute("ROLLBACK")
            throw error
        }
    }

    /// Runs `body` with an auxiliary connection (accounts and other records), blocking.
    func withAux<T>(_ body: (PGConnection) throws -> T) throws -> T {
        let slot = aux[nextAux.add(1, ordering: .relaxed).oldValue % aux.count]
        if pending.isClosed { throw StoreError.closed }
        return try slot.queue.sync { try slot.withConnection(body) }
    }

    /// `body` in one READ COMMITTED transaction on an auxiliary connection.
    func inTransaction<T>(_ body: (PGConnection) throws -> T) throws -> T {
        try withAux { connection in
            try connection.execute("BEGIN")
            do {
                let result = try body(connection)
                try connection.execute("COMMIT")
                return result
            } catch {
                try? connection.execute("ROLLBACK")
                throw error
            }
        }
    }

    // MARK: Writes

    public func write(
        _ operation: WriteOperation, check: WriteCheck?, effects: WriteEffects?,
        completion: @escaping @Sendable (Result<WriteOutcome, WriteFailure>) -> Void
    ) {
        pending.add(operation, check: check, effects: effects, completion: completion) { writerQueue.async { self.drain() } }
    }

    private func drain() {
        pending.drain { commit($0) }
    }

    /// The writer connection, reconnected when the server dropped it.
    func writerConnection() throws(StoreError) -> PGConnection {
        guard let writer else { throw .closed }
        if writer.isBrokenNow { writer.reset() }
        if writer.isBroken {
            throw .engine(EngineFailure(engine: "postgres", code: "connection", kind: .unavailable,
                                        message: "cannot reach the database: \(writer.errorMessage)", operation: "connect"))
        }
        return writer
    }

    /// Commits `batch` in one transaction: sent whole in one exchange when it can be
    /// (`prepareWhole`; not when `whole` is false, after the index check refused it), else
    /// opened first and judged inside it.
    private func commit(_ batch: [PendingWrite], whole: Bool = true) {
        // A node that gave up its lease (or never got one) writes nothing until it holds
        // one again: its writes may depend on connections another node now answers for.
        guard lease.isHeld else {
            for item in batch { item.completion(.failure(.store(Self.noLease(operation: "write")))) }
            return
        }
        let connection: PGConnection
        do {
            connection = try writerConnection()
        } catch {
            for item in batch { item.completion(.failure(.store(error))) }
            return
        }
        let time = clock()
        let started = DispatchTime.now().uptimeNanoseconds
        let view = PostgresTreeView(connection: connection, lease: BatchLease(epoch: nodeID, now: lease.nowParameter))
        var results: [Result<(Change, WriteOperation), WriteFailure>] = []
        results.reserveCapacity(batch.count)
        var last: Int64 = 0
        var wrote = false
        let (node, token) = (nodeID, Self.randomID())
        var committing = false
        var writer: PostgresTreeWriter?
        // Set when a batch sent whole was refused by the check that the list of query
        // indexes is unchanged: nothing ran after it, and the batch goes the ordinary way.
        var indexesChanged = false
        do throws(StoreError) {
            defer { connection.beforeNextStatement = nil }
            let batchWriter: PostgresTreeWriter
            var base: Int64?
            var opening: [PGConnection.Statement] = []
            if whole, let prepared = prepareWhole(batch, connection: connection, time: time) {
                (batchWriter, results) = (prepared.writer, prepared.results)
                opening = Self.wholeOpening(unchanged: prepared.unchanged)
            } else {
                // One round trip: BEGIN, the row lock that orders every node's write
                // transactions (see the type's doc) and, after it, the version of the list of
                // query indexes.
                let opened = connection.runPipelined(Self.openingStatements)
                if let failure = opened.failure { throw failure }
                let found = opened.results[1].int64(0, 0)
                (base, last) = (found, found)
                try indexes.refresh(connection, version: opened.results[2])
                batchWriter = PostgresTreeWriter(connection: connection, maxReplaced: options.maxNodesPerWrite, at: time, lastSeq: base)
                for (ticket, item) in batch.enumerated() {
                    let result = applyOne(item, ticket: ticket, writer: batchWriter, connection: connection, view: view, time: time)
                    // A store failure aborted the transaction: nothing of the batch commits.
                    if case .failure(.store(let error)) = result { throw error }
                    results.append(result)
                }
            }
            writer = batchWriter
            // One round trip: the writes still queued, the new last number, this batch's
            // mark (see `outcomeOfLostCommit`) and the wake-up, then COMMIT (after the
            // opening statements, for a batch sent whole). The writes go with the COMMIT, so
            // the ordering lock is held one exchange less.
            let applying = batchWriter.takeQueued()
            // A batch sent whole whose writes were all refused has nothing to send.
            if applying == nil && base == nil { return finish(batch, results: results, last: 0, time: time, started: started, connection: connection) }
            wrote = applying != nil || batchWriter.lastSeq > (base ?? 0)
            let closing = opening + (applying.map { [$0] } ?? [])
                + (wrote ? [Self.mark(after: base, node: node, token: token, at: time, channel: feed.channel)] : [])
                + [.init(sql: "COMMIT")]
            beforeCommit?()
            var answers = connection.runPipelined(closing)
            if answerOfCommitLost?() == true {
                answers = .init(results: [], failure: PGFailure.make(code: "08006", kind: .unavailable,
                                                                     message: "the answer was dropped", operation: "commit"))
            }
            committing = FailedBatch.commitMayHaveRun(answered: answers.results.count, commitAt: closing.count - 1,
                                                      refusedByServer: answers.refusedByServer)
            if base == nil, answers.results.count > Self.wholeLockAt {
                let found = answers.results[Self.wholeLockAt].int64(0, 0)
                batchWriter.learnBase(found)
                last = found
            }
            if applying != nil, answers.results.count > opening.count { try batchWriter.received(answers.results[opening.count]) }
            if let failure = answers.failure {
                indexesChanged = !opening.isEmpty && answers.refusedByServer && answers.results.count == Self.wholeUnchangedAt
                throw failure
            }
            // The server answers ROLLBACK to a COMMIT when a failure was swallowed earlier:
            // then the batch's mark says it did not commit, and its writes are not acknowledged.
            if answers.results.last?.commandStatus == "ROLLBACK" {
                throw PGFailure.make(code: "25P02", kind: .other,
                                     message: "the transaction failed earlier and was rolled back instead of committed", operation: "commit")
            }
            if wrote, answers.results[closing.count - 2].int64(0, 0) != batchWriter.lastSeq {
                throw StoreError.corrupt("the batch's mark and its writes disagree on its last change number")
            }
            last = Self.numbered(&results, by: batchWriter, limit: options.maxNodesPerWrite)
        } catch {
            connection.beforeNextStatement = nil  // the queued writes go with the transaction
            indexes.invalidate()
            let failure: WriteFailure
            switch FailedBatch.after(commitSent: committing, wrote: wrote) {
            case .notWritten:
                try? connection.execute("ROLLBACK")
                if indexesChanged { return commit(batch, whole: false) }
                failure = .store(error)
            case .askTheMark:
                // The COMMIT was sent: whatever came back (an error, a dropped connection,
                // nothing), only the batch's mark says whether it happened.
                let outcome = outcomeOfLostCommit(node: node, token: token)
                guard let lost = outcome.failure else {
                    lostCommitsResolved.add(1, ordering: .relaxed)
                    // The writes sent with the COMMIT, if their answer was lost too, take
                    // their numbers from the mark's last one.
                    if let writer {
                        if let base = outcome.batchBase { writer.learnBase(base) }
                        let unresolved = writer.resolveInFlight(batchLast: outcome.batchLast)
                        last = max(Self.numbered(&results, by: writer, limit: options.maxNodesPerWrite), outcome.batchLast ?? 0)
                        for ticket in unresolved { results[ticket] = .failure(LostCommit.committedUnnumbered) }
                    }
                    return finish(batch, results: results, last: last, time: time, started: started, connection: connection)
                }
                failure = lost
            }
            for item in batch { item.completion(.failure(failure)) }
            return
        }
        finish(batch, results: results, last: last, time: time, started: started, connection: connection)
    }

    /// Asks the database, on a new session, whether the batch marked `token` committed.
    /// Taking the ordering lock first waits until the old session's transaction is over
    /// (if the server still runs it: committing, or idle until
    /// `idleInTransactionTimeoutMilliseconds` ends it), so the answer is final.
    func outcomeOfLostCommit(node: String, token: String) -> LostCommit {
        guard let writer else { return .unknown("the store is closed") }
        writer.reset()
        if writer.isBroken { return .unknown("cannot reach the database: \(writer.errorMessage)") }
        do throws(StoreError) {
            try writer.execute("BEGIN")
            _ = try writer.query("SELECT value FROM hearth_meta WHERE key = 'last_seq' FOR UPDATE")
            let mark = try writer.query("SELECT token, last_seq, base_seq FROM hearth_batches WHERE node = $1", [.text(node)])
            try writer.execute("ROLLBACK")
            guard mark.rowCount > 0 && mark.text(0, 0) == token else { return .notCommitted }
            return .committed(last: mark.isNull(0, 1) ? nil : mark.int64(0, 1), base: mark.isNull(0, 2) ? nil : mark.int64(0, 2))
        } catch {
            try? writer.execute("ROLLBACK")
            return .unknown("\(error)")
        }
    }

    /// A committed batch: counted, delivered to this node's streams, acknowledged.
    private func finish(_ batch: [PendingWrite], results: [Result<(Change, WriteOperation), WriteFailure>], last: Int64,
                        time: Int64, started: UInt64, connection: PGConnection) {
        hooks.observeCommit?(batch.count, DispatchTime.now().uptimeNanoseconds &- started)
        let changes = results.compactMap { try? $0.get().0 }
        // Every change up to this batch's last reaches this node's streams, in order,
        // before any write of the batch is acknowledged.
        if !changes.isEmpty { feed.deliver(through: last, local: changes) }
        for (item, result) in zip(batch, results) {
            item.completion(result.map { WriteOutcome(seq: $0.0.seq, at: $0.0.at, applied: $0.1) })
        }
        if !changes.isEmpty {
            writesSinceTrim += changes.count
            if writesSinceTrim >= min(Self.trimEveryWrites, max(1, options.changeLogRetention / 10)) {
                writesSinceTrim = 0
                _ = try? trimChangeLog(connection, lastSeq: last, now: time)
            }
        }
    }

    /// One write inside the batch's transaction: checked on the writer's view, then queued
    /// on `writer`, which sends the batch's writes together (`PostgresTreeWriter`). A write
    /// with trigger events, watched locations or query indexes to maintain is sent at once,
    /// as what follows needs its number and the tree after it. A rejected write changed
    /// nothing; a store failure aborted the transaction (the caller rolls the batch back).
    /// A queued write's success is provisional: its number, or its failure as too large,
    /// comes from `writer`'s outcomes. A batch sent whole judges its writes here before
    /// its transaction, on a view that reads nothing (`prepareWhole`).
    func applyOne(_ item: PendingWrites.Write, ticket: Int, writer: PostgresTreeWriter, connection: PGConnection,
                  view: any TreeView, time: Int64) -> Result<(Change, WriteOperation), WriteFailure> {
        do {
            let operation = try item.checked(on: view, at: time)
            let events = try item.events(on: view, applied: operation)
            let watched = try WatchedValues(below: operation, watch: hooks.watch, view: view)
            var change = Change.record(of: operation, seq: 0, at: time)
            try writer.add(operation, as: change, ticket: ticket)
            if events.isEmpty && watched.isEmpty && indexes.count == 0 { return .success((change, operation)) }
            try writer.flush()
            guard let outcome = writer.outcome(of: ticket) else {
                throw StoreError.corrupt("the batch writer lost a write's outcome")
            }
            guard let seq = outcome.seq else { throw WriteFailure.tooLarge(.replaces(limit: options.maxNodesPerWrite)) }
            change.seq = seq
            for entry in operation.entries { try indexes.written(entry.path, connection: connection) }
            try PostgresTriggerOutbox.record(events, of: change, connection: connection)
            change.unchangedBelow = try watched.unchanged(on: view)
            return .success((change, operation))
        } catch let failure as WriteFailure {
            return .failure(failure)
        } catch {
            return .failure(.store(error as? StoreError ?? .corrupt("unexpected error")))
        }
    }

    // MARK: Size, lifecycle

    public var isStorageFull: Bool { false }

    public func storageBytes() -> Int64? {
        try? withAux { try $0.query("SELECT pg_database_size(current_database())").int64(0, 0) }
    }

    public func close() {
        guard pending.close() else { return }
        writerQueue.sync { self.drain() }
        lease.stop()
        feed.stop()
        // A clean stop hands this node's onDisconnect records over at once.
        _ = try? aux[0].queue.sync { try aux[0].withConnection { connection in
            _ = try connection.query("UPDATE hearth_nodes SET lease_until = 0 WHERE id = $1", [.text(nodeID)])
        } }
        writerQueue.sync { self.writer = nil }
        for slot in readers.members + aux { slot.close() }
    }

    // MARK: Lost commits (tests make one)

    /// Batches whose connection dropped during COMMIT and that had committed after all.
    let lostCommitsResolved = Atomic<Int>(0)

    /// Exchanges with the database on the writer's connection so far (`PGConnection.exchanges`).
    func writerExchangesForTesting() -> Int {
        writerQueue.sync { writer?.exchanges ?? 0 }
    }

    /// The server process of the writer's session (tests end it to lose a batch's exchange).
    func writerSessionForTesting() throws -> Int64 {
        try writerQueue.sync { () throws -> Int64 in try writerConnection().query("SELECT pg_backend_pid()").int64(0, 0) }
    }

    /// `outcomeOfLostCommit` on the writer queue.
    func outcomeOfLostCommitForTesting(node: String, token: String) -> LostCommit {
        writerQueue.sync { outcomeOfLostCommit(node: node, token: token) }
    }

    // MARK: Records

    public var accountStore: any AccountStore { PostgresAccountStore(engine: self) }
    public var consoleRecords: any ConsoleRecords { PostgresConsoleRecords(engine: self) }
    public var onDisconnectRecords: any OnDisconnectRecords { PostgresOnDisconnectRecords(engine: self) }
    public var triggerOutbox: any TriggerOutbox { PostgresTriggerOutbox(engine: self) }
    public var signingKeys: any SigningKeyStore { PostgresKeyStore(engine: self) }
    public var limitCounters: (any LimitCounters)? { PostgresLimitCounters(engine: self) }
    /// Limit-counter updates on this node (pruning runs every `PostgresLimitCounters.pruneEvery`).
    let limitUpdates = Atomic<Int>(0)
}
