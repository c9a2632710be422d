import Dispatch
import HearthJSON
import Synchronization
#if canImport(Glibc)
import Glibc
#endif
import HearthStore
import HearthSystem

/// The tree in one SQLite file (docs/design.md §4): a single writer on its own serial queue
/// with group commit, and readers on separate connections, each confined to its own queue.
///
/// `@unchecked Sendable`: the connections are only touched on the queue that owns them
/// (`writerQueue` for the writer, each `Reader.queue` for a reader); the pending-write
/// list and the flags are inside `Mutex`es.
public final class SQLiteTreeStore: TreeStore, @unchecked Sendable {
    public static let fileName = "hearth.sqlite"

    public let databasePath: String
    /// The data directory: the database file and the signing keys' folder.
    public let directory: String
    let options: StoreOptions
    let clock: @Sendable () -> Int64
    private let onCommit: @Sendable ([Change], any TreeView) -> Void
    private let onDurable: @Sendable ([Change]) -> Void
    /// The newest change seq known to be on disk (`CommitSyncer`): what the triggers'
    /// outbox hands out (`SQLiteTriggerOutbox.pending`).
    let durableSeq = Atomic<Int64>(0)
    private let watch: (@Sendable (DataPath) -> [DataPath]?)?
    private let observeCommit: (@Sendable (_ writes: Int, _ nanoseconds: UInt64) -> Void)?
    /// The reserve for deletes on a full disk, and whether writes are being refused for
    /// lack of space (`DiskSpace`).
    let space: DiskSpace

    let writerQueue = DispatchQueue(label: "hearth.store.writer")
    private let writerKey = DispatchSpecificKey<UInt8>()
    var writer: SQLiteConnection?  // confined to writerQueue
    /// The readers, each read going to an idle one (`ReaderPool`).
    let readers: ReaderPool<Reader>
    /// Checkpoints the WAL instead of the writer's COMMITs (`WALCheckpointer`).
    let checkpointer: WALCheckpointer

    private let pending: PendingWrites
    /// Syncs each batch's WAL off the writer's thread and answers its writers after.
    let syncer: CommitSyncer
    private var writesSinceTrim = 0  // confined to writerQueue
    /// `TreeWriter`'s ancestors known to hold no row, carried between transactions.
    private var clearedAncestors = Set<JSONKey>()  // confined to writerQueue
    var queryIndexes: QueryIndexMaintainer?  // confined to writerQueue
    /// Index builds asked for and not yet done ("location\u{0}spec").
    let indexRequests = Mutex<Set<JSONKey>>([])

    private typealias PendingWrite = PendingWrites.Write

    /// One reader connection and the queue it lives on.
    final class Reader: QueueConfined, @unchecked Sendable {  // `connection` is confined to `queue`
        let queue: DispatchQueue
        let key = DispatchSpecificKey<UInt8>()
        var connection: SQLiteConnection?
        init(index: Int) {
            queue = DispatchQueue(label: "hearth.store.reader.\(index)")
            queue.setSpecific(key: key, value: 1)
        }
    }

    /// Opens (creating if needed) the database in `directory` and migrates it.
    /// - Parameters:
    ///   - clock: milliseconds since the epoch, used as each batch's commit time.
    ///   - onCommit: called on the writer queue with each batch's changes, only after the
    ///     batch committed and before any of its writes is acknowledged (docs/design.md §3
    ///     step 4), with the writer's view of exactly the state the batch left. Must not block.
    ///   - watch: the locations strictly below a write's path that someone listens to (nil:
    ///     too many to compare). The writer compares their values before and after the
    ///     write and reports the unchanged ones in `Change.unchangedBelow`.
    ///   - observeWrite: told of each write the writer took, as it is answered: how long it
    ///     waited for its batch, and how long it took until its answer (`PendingWrites`).
    ///   - observeStorage: told of writes refused for lack of space and of the volume
    ///     filling up and recovering (`DiskSpace`), called on the writer queue; and of a
    ///     failed sync of the WAL, on the store's sync queue (`CommitSyncer`).
    ///   - reserveBytes: the space held back so deletes commit on a full disk.
    ///   - syncData: how the WAL's data is made durable after a batch's COMMIT, given a
    ///     descriptor on it (`fdatasync`; tests hold, count or fail it).
    public init(
        directory: String, options: StoreOptions = StoreOptions(),
        clock: @escaping @Sendable () -> Int64 = WallClock.milliseconds,
        watch: (@Sendable (DataPath) -> [DataPath]?)? = nil,
        observeCommit: (@Sendable (_ writes: Int, _ nanoseconds: UInt64) -> Void)? = nil,
        observeSync: (@Sendable (_ nanoseconds: UInt64) -> Void)? = nil,
        observeWrite: (@Sendable (_ waited: UInt64, _ answered: UInt64) -> Void)? = nil,
        observeStorage: @escaping @Sendable (StorageEvent) -> Void = { _ in },
        reserveBytes: Int = DiskSpace.reserveBytes,
        syncData: @escaping @Sendable (Int32) throws(SystemError) -> Void = Syscall.syncData,
        onCommit: @escaping @Sendable ([Change], any TreeView) -> Void = { _, _ in },
        onDurable: @escaping @Sendable ([Change]) -> Void = { _ in }
    ) throws(StoreError) {
        try Self.createDirectory(directory)
        self.syncer = CommitSyncer(sync: { file throws(SystemError) in try file.sync(using: syncData) }, observe: observeSync) { [databasePath = directory + "/" + Self.fileName] error in
            observeStorage(.syncFailed(file: databasePath + "-wal", errno: error.errno))
        }
        self.space = DiskSpace(directory: directory, bytes: reserveBytes, observe: observeStorage)
        self.databasePath = directory + "/" + Self.fileName
        self.directory = directory
        self.options = options
        self.pending = PendingWrites(options: options, observe: observeWrite)
        self.clock = clock
        self.onCommit = onCommit
        self.onDurable = onDurable
        self.watch = watch
        self.observeCommit = observeCommit
        writerQueue.setSpecific(key: writerKey, value: 1)
        // The writer's commits sync the WAL (FULL): its frame writes can be gathered into
        // one per commit (`WALWriteCoalescing`). With NORMAL they may not.
        let writer = try SQLiteConnection(path: databasePath, mode: .readWriteCreate,
                                          coalescingWALWrites: options.synchronous == .full)
        try writer.execute("PRAGMA busy_timeout = \(options.busyTimeoutMilliseconds)")
        try Schema.useWAL(writer, busyTimeoutMilliseconds: options.busyTimeoutMilliseconds)
        try writer.execute("PRAGMA synchronous = \(options.synchronous.rawValue)")
        try writer.execute("PRAGMA foreign_keys = ON")
        try Schema.migrate(writer)
        self.queryIndexes = try QueryIndexMaintainer(connection: writer)
        self.writer = writer
        var readers: [Reader] = []
        for index in 0..<max(1, options.readerCount) {
            let reader = Reader(index: index)
            let connection = try SQLiteConnection(path: databasePath, mode: .readOnly)
            try connection.execute("PRAGMA busy_timeout = \(options.busyTimeoutMilliseconds)")
            reader.connection = connection
            readers.append(reader)
        }
        self.readers = ReaderPool(readers)
        // Everything in the file at open is on disk (SQLite recovered the WAL from it).
        durableSeq.store(try ChangeLogReader(connection: writer).lastSeq(), ordering: .releasing)
        self.checkpointer = try WALCheckpointer(
            path: databasePath, synchronous: options.synchronous.rawValue, busyTimeoutMilliseconds: options.busyTimeoutMilliseconds)
        checkpointer.attach(to: writer)
        space.start()
    }

    deinit {
        writer = nil
        for reader in readers.members { reader.connection = nil }
    }

    /// The wall clock (`WallClock.milliseconds`), kept under this name for callers from
    /// before the clock moved out of the store.
    public static let systemMilliseconds: @Sendable () -> Int64 = WallClock.milliseconds

    /// Opens the engine in `directory` with the composition root's hooks.
    public convenience init(directory: String, options: StoreOptions = StoreOptions(),
                            clock: @escaping @Sendable () -> Int64 = WallClock.milliseconds,
                            hooks: EngineHooks) throws(StoreError) {
        try self.init(directory: directory, options: options, clock: clock, watch: hooks.watch,
                      observeCommit: hooks.observeCommit, observeSync: hooks.observeSync, observeWrite: hooks.observeWrite,
                      observeStorage: hooks.observeStorage,
                      onCommit: hooks.onCommit,
                      onDurable: hooks.onDurable)
    }

    private static func createDirectory(_ directory: String) throws(StoreError) {
        do throws(SystemError) {
            _ = try Syscall.makeDirectory(directory, mode: DatabaseFile.directoryMode)
        } catch {
            throw .sqlite(code: 14, message: "cannot create data directory: errno \(error.errno)", operation: "open")
        }
    }

    // MARK: Reads

    public func read<T: Sendable>(
        _ body: @escaping @Sendable (any TreeView) throws -> T,
        completion: @escaping @Sendable (Result<T, any Error>) -> Void
    ) {
        readers.async { reader in
            guard let connection = reader.connection else {
                completion(.failure(StoreError.closed))
                return
            }
            completion(Result { try self.inReadTransaction(connection, body) })
        }
    }

    /// Runs `body` synchronously on a reader (for tools, tests and the CLI).
    public func readSync<T>(_ body: (any TreeView) throws -> T) throws -> T {
        try readers.sync { reader in
            guard let connection = reader.connection else { throw StoreError.closed }
            return try self.inReadTransaction(connection, body)
        }
    }

    private func inReadTransaction<T>(_ connection: SQLiteConnection, _ body: (any TreeView) throws -> T) throws -> T {
        try connection.execute("BEGIN")
        defer { try? connection.execute("COMMIT") }
        return try body(SQLiteTreeView(connection: connection, onMissingIndex: { [weak self] path, spec in
            self?.requestIndex(at: path, spec: spec)
        }))
    }

    // MARK: Query indexes (building them: SQLiteTreeStore+QueryIndexes.swift)

    /// The plan SQLite uses for an index query, one line per step.
    public func queryIndexPlan() throws -> [String] {
        try readSync { view in try (view as! SQLiteTreeView).indexQueryPlan() }
    }

    // MARK: Writes

    public func write(
        _ operation: WriteOperation, check: WriteCheck? = nil, effects: WriteEffects? = nil,
        completion: @escaping @Sendable (Result<WriteOutcome, WriteFailure>) -> Void
    ) {
        pending.add(operation, check: check, effects: effects, completion: completion) { writerQueue.async { self.drain() } }
    }

    /// Commits pending writes in batches until none are left (runs on `writerQueue`).
    private func drain() {
        pending.drain { commit($0) }
    }

    private func commit(_ batch: [PendingWrite]) {
        guard let connection = writer else {
            for item in batch { item.completion(.failure(.store(.closed))) }
            return
        }
        if let refusal = syncer.failure {
            for item in batch { item.completion(.failure(.store(refusal))) }
            return
        }
        guard let error = transact(batch, connection: connection) else {
            if space.isFull { _ = space.readinessProblem() }
            return
        }
        guard error.isDiskFull else {
            for item in batch { item.completion(.failure(.store(error))) }
            return
        }
        // Out of space: refuse what adds data; retry what only deletes with the reserve
        // released, so an operator can free space through the API (DiskSpace).
        space.noteRefused()
        let deletes = batch.filter(\.operation.onlyDeletes)
        for item in batch where !item.operation.onlyDeletes { item.completion(.failure(.store(error))) }
        if deletes.isEmpty { return }
        space.release()
        if let again = transact(deletes, connection: connection) {
            if again.isDiskFull { space.noteRefused() }
            for item in deletes { item.completion(.failure(.store(again))) }
        } else {
            // Give the WAL's pages back to the volume so the reserve fits again.
            try? connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        }
        space.restore()
    }

    /// Commits `batch` in one transaction and completes each write; or, when the
    /// transaction cannot begin or commit, rolls it back, completes nothing and returns why.
    private func transact(_ batch: [PendingWrite], connection: SQLiteConnection) -> StoreError? {
        let time = clock()
        let started = DispatchTime.now().uptimeNanoseconds
        let view = SQLiteTreeView(connection: connection)
        var results: [Result<(Change, WriteOperation), WriteFailure>] = []
        results.reserveCapacity(batch.count)
        do {
            try connection.executeCached("BEGIN IMMEDIATE")
        } catch {
            return error
        }
        var treeWriter: TreeWriter
        do {
            // Moved, not copied: the writer owns the set until the batch commits.
            let carried = clearedAncestors
            clearedAncestors = []
            treeWriter = TreeWriter(connection: connection, mayHavePriorities: try TreeWriter.prioritiesExist(connection),
                                    clearedAncestors: carried)
        } catch {
            try? connection.execute("ROLLBACK")
            return error
        }
        for item in batch {
            results.append(Self.applyOne(item, connection: connection, view: view, writer: &treeWriter, time: time, watch: watch, indexes: queryIndexes,
                                        maxNodes: options.maxNodesPerWrite))
        }
        let owed: WALSyncFile?
        do {
            // The WAL's sync, when SQLite's COMMIT would make it, is left to `syncer`.
            owed = try WALWriteCoalescing.commitDeferringSync(on: connection) { () throws(StoreError) in
                try connection.executeCached("COMMIT")
            }
        } catch {
            // The rows the batch deleted are back: `clearedAncestors` stays empty.
            try? connection.execute("ROLLBACK")
            try? queryIndexes?.reload(connection: connection)
            return error
        }
        clearedAncestors = treeWriter.cleared
        observeCommit?(batch.count, DispatchTime.now().uptimeNanoseconds &- started)
        // Streams hear of the batch before any writer is acknowledged, so an
        // acknowledged write is never missing from a subscriber's later events.
        let changes = results.compactMap { try? $0.get().0 }
        if !changes.isEmpty { onCommit(changes, view) }
        for result in results {
            if case .failure(.store(let error)) = result, error.isDiskFull { space.noteRefused() }
        }
        // The writers are answered once the batch is on disk (`CommitSyncer`), while this
        // queue goes on with the next batch.
        let answers = zip(batch.map(\.completion), results.map { $0.map { WriteOutcome(seq: $0.0.seq, at: $0.0.at, applied: $0.1) } })
        syncer.submit(owing: owed) { refusal in
            if refusal == nil, let last = changes.last {
                self.durableSeq.store(last.seq, ordering: .releasing)
                self.onDurable(changes)
            }
            for (completion, result) in answers {
                if let refusal, case .success = result {
                    // Committed and visible, but maybe not on disk.
                    completion(.failure(.outcomeUnknown(refusal)))
                } else {
                    completion(result)
                }
            }
        }
        if let last = changes.last {
            writesSinceTrim += changes.count
            if writesSinceTrim >= min(Self.trimEveryWrites, max(1, options.changeLogRetention / 10)) {
                writesSinceTrim = 0
                trimChangeLog(connection, lastSeq: last.seq, now: time)
            }
        }
        return nil
    }

    /// One write inside the batch's transaction, in a savepoint so its failure undoes only it.
    private static func applyOne(
        _ item: PendingWrite, connection: SQLiteConnection, view: SQLiteTreeView,
        writer: inout TreeWriter, time: Int64, watch: (@Sendable (DataPath) -> [DataPath]?)?,
        indexes: QueryIndexMaintainer?, maxNodes: Int
    ) -> Result<(Change, WriteOperation), WriteFailure> {
        do {
            try connection.executeCached("SAVEPOINT w")
        } catch {
            return .failure(.store(error))
        }
        do {
            let operation = try item.checked(on: view, at: time)
            let events = try item.events(on: view, applied: operation)
            let watched = try WatchedValues(below: operation, watch: watch, view: view)
            var replaced: [Int] = []
            if try Self.replacedRows(operation, connection: connection, limit: maxNodes, perEntry: &replaced) > maxNodes {
                throw WriteFailure.tooLarge(.replaces(limit: maxNodes))
            }
            // With one entry, its count is of this very state: nothing counted, nothing to
            // delete at or below it. (Several entries are applied in turn, so an earlier one
            // could put rows under a later one's path after the count.)
            let single = operation.entries.count == 1
            for (index, entry) in operation.entries.enumerated() {
                try writer.apply(entry, replacesRows: !single || replaced[index] > 0)
                try indexes?.written(entry.path, connection: connection)
            }
            var change = try writer.log(operation, at: time)
            try writer.record(events, of: change)
            change.unchangedBelow = try watched.unchanged(on: view)
            try connection.executeCached("RELEASE w")
            return .success((change, operation))
        } catch {
            try? connection.execute("ROLLBACK TO w")
            try? connection.execute("RELEASE w")
            writer.forgetCleared()
            try? indexes?.reload(connection: connection)
            if let failure = error as? WriteFailure { return .failure(failure) }
            return .failure(.store(error as? StoreError ?? .corrupt("unexpected error")))
        }
    }

    /// The stored rows `operation` replaces or deletes (at and below each entry's path),
    /// counted up to `limit + 1` by an index range scan that stops there; `perEntry` gets
    /// each entry's count (all of them unless the total passed `limit` first).
    static func replacedRows(_ operation: WriteOperation, connection: SQLiteConnection, limit: Int,
                             perEntry: inout [Int]) throws(StoreError) -> Int {
        let sql = "SELECT (SELECT count(*) FROM (SELECT 1 FROM nodes WHERE path >= ?2 AND path < ?3 LIMIT ?4))"
            + " + EXISTS (SELECT 1 FROM nodes WHERE path = ?1)"
        let rootSQL = "SELECT count(*) FROM (SELECT 1 FROM nodes LIMIT ?1)"
        let firstSQL = "SELECT path FROM nodes WHERE path >= ?1 AND path < ?2 ORDER BY path LIMIT 1"
        var total = 0
        for entry in operation.entries {
            let statement: SQLiteStatement
            if entry.path.isRoot {
                statement = try connection.statement(rootSQL)
                try statement.reset([.integer(Int64(limit - total + 1))])
            } else {
                let key = entry.path.storageKey
                // `descendantRange(key)`'s upper end, alone: the probe needs only it.
                let upper = key + "0"
                // One probe of [key, key + "0"), which holds the key and everything below
                // it, answers the usual cases without the exact count's two lookups:
                // nothing there (a create) is 0; the key itself first is a leaf, which
                // has nothing below it, so 1 (an update of a field). Anything else (rows
                // below, or siblings between the key and its "/", like "key-2") is counted.
                let probe = try connection.statement(firstSQL)
                try probe.reset([.text(key), .text(upper)])
                let first = try probe.step() ? probe.text(0) : nil
                try probe.reset()
                // Byte equality: `==` on strings would take canonically equivalent keys,
                // which are different locations, for the same.
                let isKey = first.map { $0.sameCodeUnits(as: key) } ?? false
                if first == nil || isKey {
                    let count = isKey ? 1 : 0
                    perEntry.append(count)
                    total += count
                    if total > limit { return total }
                    continue
                }
                statement = try connection.statement(sql)
                let range = SQLiteTreeView.descendantRange(key)
                try statement.reset([.text(key), .text(range.lower), .text(range.upper), .integer(Int64(limit - total + 1))])
            }
            let count = try statement.step() ? Int(statement.int64(0)) : 0
            perEntry.append(count)
            total += count
            try statement.reset()
            if total > limit { return total }
        }
        return total
    }

    // MARK: Lifecycle

    /// Finishes queued writes, checkpoints the WAL and closes every connection. Later
    /// writes fail with `.closed`.
    public func close() {
        pending.close()
        writerQueue.sync {
            self.drain()
            if let writer = self.writer { checkpointer.detach(from: writer) }
        }
        syncer.waitIdle()
        checkpointer.close()
        writerQueue.sync {
            if let writer = self.writer {
                try? writer.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            }
        }
        for reader in readers.members {
            reader.queue.sync { reader.connection = nil }
        }
        writerQueue.sync { self.writer = nil }
    }

    /// `PRAGMA integrity_check` on the writer connection: "ok" when the file is sound.
    public func integrityCheck() throws -> String {
        try writerQueue.sync {
            guard let writer else { throw StoreError.closed }
            return try writer.scalarText("PRAGMA integrity_check") ?? ""
        }
    }
}
