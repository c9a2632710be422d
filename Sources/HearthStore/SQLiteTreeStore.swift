import Dispatch
import HearthJSON
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The tree in one SQLite file (DESIGN.md §4): a single writer on its own serial queue with
/// group commit, and readers on separate connections, each confined to its own queue.
///
/// `@unchecked Sendable`: the connections are only touched on the queue that owns them
/// (`writerQueue` for the writer, each `Reader.queue` for a reader); the pending-write
/// list and the flags are inside `Mutex`es.
public final class SQLiteTreeStore: TreeStore, @unchecked Sendable {
    public static let fileName = "hearth.sqlite"

    public let databasePath: String
    private let options: StoreOptions
    private let clock: @Sendable () -> Int64
    private let onCommit: @Sendable ([Change]) -> Void

    private let writerQueue = DispatchQueue(label: "hearth.store.writer")
    private let writerKey = DispatchSpecificKey<UInt8>()
    private var writer: SQLiteConnection?  // confined to writerQueue
    private let readers: [Reader]
    private let nextReader = Atomic<Int>(0)

    private struct State {
        var pending: [PendingWrite] = []
        var draining = false
        var closed = false
    }
    private let state = Mutex(State())
    private var lastTrimmedSeq: Int64 = 0  // confined to writerQueue

    private struct PendingWrite {
        var operation: WriteOperation
        var check: WriteCheck?
        var completion: @Sendable (Result<WriteOutcome, WriteFailure>) -> Void
    }

    /// One reader connection and the queue it lives on.
    private final class Reader: @unchecked Sendable {  // `connection` is confined to `queue`
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
    ///     batch committed (DESIGN.md §3 step 4). Must not block.
    public init(
        directory: String, options: StoreOptions = StoreOptions(),
        clock: @escaping @Sendable () -> Int64 = SQLiteTreeStore.systemMilliseconds,
        onCommit: @escaping @Sendable ([Change]) -> Void = { _ in }
    ) throws(StoreError) {
        try Self.createDirectory(directory)
        self.databasePath = directory + "/" + Self.fileName
        self.options = options
        self.clock = clock
        self.onCommit = onCommit
        writerQueue.setSpecific(key: writerKey, value: 1)
        let writer = try SQLiteConnection(path: databasePath, mode: .readWriteCreate)
        try writer.execute("PRAGMA busy_timeout = \(options.busyTimeoutMilliseconds)")
        try writer.execute("PRAGMA journal_mode = WAL")
        try writer.execute("PRAGMA synchronous = \(options.synchronous.rawValue)")
        try writer.execute("PRAGMA foreign_keys = ON")
        try Schema.migrate(writer)
        self.writer = writer
        var readers: [Reader] = []
        for index in 0..<max(1, options.readerCount) {
            let reader = Reader(index: index)
            let connection = try SQLiteConnection(path: databasePath, mode: .readOnly)
            try connection.execute("PRAGMA busy_timeout = \(options.busyTimeoutMilliseconds)")
            reader.connection = connection
            readers.append(reader)
        }
        self.readers = readers
        self.lastTrimmedSeq = 0
    }

    deinit {
        writer = nil
        for reader in readers { reader.connection = nil }
    }

    public static let systemMilliseconds: @Sendable () -> Int64 = {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
    }

    private static func createDirectory(_ directory: String) throws(StoreError) {
        if mkdir(directory, 0o700) != 0 && errno != EEXIST {
            throw .sqlite(code: 14, message: "cannot create data directory: errno \(errno)", operation: "open")
        }
    }

    // MARK: Reads

    public func read<T: Sendable>(
        _ body: @escaping @Sendable (any TreeView) throws -> T,
        completion: @escaping @Sendable (Result<T, any Error>) -> Void
    ) {
        let reader = readers[nextReader.add(1, ordering: .relaxed).oldValue % readers.count]
        reader.queue.async {
            guard let connection = reader.connection else {
                completion(.failure(StoreError.closed))
                return
            }
            completion(Result { try Self.inReadTransaction(connection, body) })
        }
    }

    /// Runs `body` synchronously on a reader (for tools, tests and the CLI).
    public func readSync<T>(_ body: (any TreeView) throws -> T) throws -> T {
        let reader = readers[0]
        return try reader.queue.sync {
            guard let connection = reader.connection else { throw StoreError.closed }
            return try Self.inReadTransaction(connection, body)
        }
    }

    private static func inReadTransaction<T>(_ connection: SQLiteConnection, _ body: (any TreeView) throws -> T) throws -> T {
        try connection.execute("BEGIN")
        defer { try? connection.execute("COMMIT") }
        return try body(SQLiteTreeView(connection: connection))
    }

    // MARK: Writes

    public func write(
        _ operation: WriteOperation, check: WriteCheck? = nil,
        completion: @escaping @Sendable (Result<WriteOutcome, WriteFailure>) -> Void
    ) {
        let startDrain: Bool? = state.withLock { state in
            if state.closed { return nil }
            state.pending.append(PendingWrite(operation: operation, check: check, completion: completion))
            if state.draining { return false }
            state.draining = true
            return true
        }
        switch startDrain {
        case nil: completion(.failure(.store(.closed)))
        case true?: writerQueue.async { self.drain() }
        case false?: break
        }
    }

    /// Writes synchronously (for tools, tests and the CLI). Do not call on the writer queue.
    @discardableResult
    public func writeSync(_ operation: WriteOperation, check: WriteCheck? = nil) throws(WriteFailure) -> WriteOutcome {
        let box = Mutex<Result<WriteOutcome, WriteFailure>?>(nil)
        let done = DispatchSemaphore(value: 0)
        write(operation, check: check) { result in
            box.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        return try box.withLock { $0! }.get()
    }

    /// Commits pending writes in batches until none are left (runs on `writerQueue`).
    private func drain() {
        while true {
            let batch: [PendingWrite] = state.withLock { state in
                let n = min(state.pending.count, options.maxBatchSize)
                let batch = Array(state.pending.prefix(n))
                state.pending.removeFirst(n)
                if batch.isEmpty { state.draining = false }
                return batch
            }
            if batch.isEmpty { return }
            commit(batch)
        }
    }

    private func commit(_ batch: [PendingWrite]) {
        guard let connection = writer else {
            for item in batch { item.completion(.failure(.store(.closed))) }
            return
        }
        let time = clock()
        let view = SQLiteTreeView(connection: connection)
        let treeWriter = TreeWriter(connection: connection)
        var results: [Result<Change, WriteFailure>] = []
        results.reserveCapacity(batch.count)
        do {
            try connection.execute("BEGIN IMMEDIATE")
        } catch {
            for item in batch { item.completion(.failure(.store(error))) }
            return
        }
        for item in batch {
            results.append(Self.applyOne(item, connection: connection, view: view, writer: treeWriter, time: time))
        }
        do {
            try connection.execute("COMMIT")
        } catch {
            try? connection.execute("ROLLBACK")
            for item in batch { item.completion(.failure(.store(error))) }
            return
        }
        // Streams hear of the batch before any writer is acknowledged, so an
        // acknowledged write is never missing from a subscriber's later events.
        let changes = results.compactMap { try? $0.get() }
        if !changes.isEmpty { onCommit(changes) }
        for (item, result) in zip(batch, results) {
            item.completion(result.map { WriteOutcome(seq: $0.seq, at: $0.at) })
        }
        if let last = changes.last {
            trimChangeLog(connection, lastSeq: last.seq)
        }
    }

    /// One write inside the batch's transaction, in a savepoint so its failure undoes only it.
    private static func applyOne(
        _ item: PendingWrite, connection: SQLiteConnection, view: SQLiteTreeView,
        writer: TreeWriter, time: Int64
    ) -> Result<Change, WriteFailure> {
        do {
            try connection.execute("SAVEPOINT w")
        } catch {
            return .failure(.store(error))
        }
        do {
            if let check = item.check {
                do {
                    try check(view, item.operation)
                } catch let error as StoreError {
                    throw WriteFailure.store(error)
                } catch {
                    throw WriteFailure.rejected(error)
                }
            }
            for entry in item.operation.entries {
                try writer.apply(entry)
            }
            let change = try writer.log(item.operation, at: time)
            try connection.execute("RELEASE w")
            return .success(change)
        } catch {
            try? connection.execute("ROLLBACK TO w")
            try? connection.execute("RELEASE w")
            if let failure = error as? WriteFailure { return .failure(failure) }
            return .failure(.store(error as? StoreError ?? .corrupt("unexpected error")))
        }
    }

    /// Keeps the change log at `changeLogRetention` rows, trimming in steps so the cost is
    /// paid once per many commits.
    private func trimChangeLog(_ connection: SQLiteConnection, lastSeq: Int64) {
        let retention = Int64(options.changeLogRetention)
        let step = max(1, retention / 10)
        let keepFrom = lastSeq - retention
        guard keepFrom - lastTrimmedSeq >= step else { return }
        do {
            try connection.statement("DELETE FROM changes WHERE seq <= ?").run([.integer(keepFrom)])
            lastTrimmedSeq = keepFrom
        } catch {
            // Trimming is housekeeping: a failure is retried at the next step.
        }
    }

    // MARK: Direct access for the account tables

    /// Runs `body` on the writer queue with the writer connection (blocking the caller).
    func onWriter<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        try writerQueue.sync {
            guard let writer else { throw StoreError.closed }
            return try body(writer)
        }
    }

    /// Runs `body` on a reader (blocking the caller).
    func onReader<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        let reader = readers[nextReader.add(1, ordering: .relaxed).oldValue % readers.count]
        return try reader.queue.sync {
            guard let connection = reader.connection else { throw StoreError.closed }
            return try body(connection)
        }
    }

    // MARK: Change log

    /// Changes with `seq` greater than `after`, oldest first, at most `limit`; and the
    /// smallest seq the log still holds (so a caller can tell whether it missed some).
    public func changes(after: Int64, limit: Int) throws -> (changes: [Change], oldestSeq: Int64?) {
        try readers[0].queue.sync {
            guard let connection = readers[0].connection else { throw StoreError.closed }
            return try ChangeLogReader(connection: connection).changes(after: after, limit: limit)
        }
    }

    // MARK: Lifecycle

    /// Finishes queued writes, checkpoints the WAL and closes every connection. Later
    /// writes fail with `.closed`.
    public func close() {
        state.withLock { $0.closed = true }
        writerQueue.sync {
            self.drain()
            if let writer = self.writer {
                try? writer.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            }
        }
        for reader in readers {
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
