import Dispatch
import HearthStore
import HearthSystem
import Synchronization

/// A descriptor of its own on one open WAL file, so the WAL can be synced off the
/// writer's thread (`CommitSyncer`). Opened by `WALWriteCoalescing` right after SQLite
/// opened the WAL, on the same path, so both name the same file; SQLite keeps that file
/// (never unlinks or replaces it) while the connection that opened it is open, and this
/// object may outlive that connection: a sync then reaches a file SQLite closed, which
/// is harmless.
final class WALSyncFile: Sendable {
    let fd: Int32
    let path: String
    /// The directory holding the WAL, synced with the first sync: its entry for the file
    /// must be on disk too (SQLite does this with its own first sync of a new WAL). Opened
    /// here with the file, so a sync never opens anything (no EMFILE on the write path).
    private let directoryFD: Int32
    private let directorySynced = Atomic<Bool>(false)

    init(path: String) throws(SystemError) {
        let cut = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
        let fd = try Syscall.openForSync(path)
        do {
            self.directoryFD = try Syscall.openForSync(cut.isEmpty ? "/" : cut)
        } catch {
            try? Syscall.close(fd)
            throw error
        }
        self.fd = fd
        self.path = path
    }

    deinit {
        try? Syscall.close(fd)
        try? Syscall.close(directoryFD)
    }

    /// Makes everything written to the file so far durable, through `syncData`
    /// (`fdatasync`) on `fd`.
    func sync(using syncData: (Int32) throws(SystemError) -> Void = Syscall.syncData) throws(SystemError) {
        if !directorySynced.load(ordering: .acquiring) {
            try Syscall.syncAll(directoryFD)
            directorySynced.store(true, ordering: .releasing)
        }
        try syncData(fd)
    }
}

/// Answers a batch's writers once its commit is on disk, off the writer's thread.
///
/// With `synchronous=full` the writer's COMMIT used to end with SQLite's `fdatasync` of
/// the WAL, and the next batch waited for it: about 40 % of each commit under creates,
/// and on this project's test machines single syncs of 100–160 ms, which every write and
/// push behind them waited out. Now the commit publishes the batch without the sync
/// (`WALWriteCoalescing.commitDeferringSync`), the writer hands the batch's answers here
/// and starts the next batch at once, and this queue syncs the WAL and then answers.
/// One sync covers every batch committed before it started (the WAL is one file, written
/// in order), so batches that commit while a sync runs share the next one.
///
/// What it keeps: no write is acknowledged before its batch is on disk, and answers go out
/// in commit order. What it changes: a batch is visible to reads and listeners from its
/// COMMIT, up to one sync before it is durable; on a power loss in that window it is
/// gone, and it was never acknowledged.
///
/// A failed sync leaves the WAL's state on disk unknown (Linux may drop the pages it could
/// not write), and later batches build on the batch that failed: so the writes waiting on
/// it fail, and every later write fails too (`failure`) until the process restarts and
/// SQLite recovers the WAL from what is on disk.
final class CommitSyncer: Sendable {
    typealias Sync = @Sendable (WALSyncFile) throws(SystemError) -> Void

    private struct Waiting {
        /// The file whose sync this batch waits on; nil when its COMMIT synced or wrote nothing.
        let owed: WALSyncFile?
        let answer: @Sendable (StoreError?) -> Void
    }

    private struct State {
        var waiting: [Waiting] = []
        var running = false
        var failure: StoreError?
        var syncs = 0
    }

    private let queue = DispatchQueue(label: "hearth.store.sync")
    private let state = Mutex(State())
    private let sync: Sync
    private let onFailure: @Sendable (SystemError) -> Void
    private let observe: (@Sendable (_ nanoseconds: UInt64) -> Void)?

    /// `onFailure`: told once, of the first failed sync; `observe`: how long each sync took.
    init(sync: @escaping Sync, observe: (@Sendable (_ nanoseconds: UInt64) -> Void)? = nil,
         onFailure: @escaping @Sendable (SystemError) -> Void = { _ in }) {
        self.sync = sync
        self.observe = observe
        self.onFailure = onFailure
    }

    /// Why writes are refused: a sync failed (nil while every sync has succeeded).
    var failure: StoreError? { state.withLock { $0.failure } }

    /// Syncs made so far (tests).
    var syncs: Int { state.withLock { $0.syncs } }

    /// After a batch's COMMIT, on the writer's queue: `answer` runs once `owed` is synced
    /// (with nil, or the error that refuses the batch's writes), after the answers of every
    /// batch submitted before. When nothing is owed and nothing waits, it runs at once, on
    /// the caller's thread.
    func submit(owing owed: WALSyncFile?, answer: @escaping @Sendable (StoreError?) -> Void) {
        let now: Bool = state.withLock { state in
            if owed == nil, !state.running, state.waiting.isEmpty { return true }
            state.waiting.append(Waiting(owed: owed, answer: answer))
            if state.running { return false }
            state.running = true
            queue.async { self.drain() }
            return false
        }
        if now { answer(nil) }
    }

    /// Returns once every batch submitted so far is answered.
    func waitIdle() {
        queue.sync {}
    }

    private func drain() {
        while true {
            let round: [Waiting] = state.withLock { state in
                let round = state.waiting
                state.waiting = []
                if round.isEmpty { state.running = false }
                return round
            }
            if round.isEmpty { return }
            // One sync per file owed (one file in practice: the writer's WAL), started
            // after every batch of the round committed.
            var outcomes: [(file: WALSyncFile, error: StoreError?)] = []
            for entry in round {
                guard let file = entry.owed, !outcomes.contains(where: { $0.file === file }) else { continue }
                outcomes.append((file, attempt(file)))
            }
            for entry in round {
                let error = entry.owed.flatMap { file in outcomes.first { $0.file === file }?.error }
                entry.answer(error)
            }
        }
    }

    private func attempt(_ file: WALSyncFile) -> StoreError? {
        do throws(SystemError) {
            let started = DispatchTime.now().uptimeNanoseconds
            try sync(file)
            observe?(DispatchTime.now().uptimeNanoseconds &- started)
            state.withLock { $0.syncs += 1 }
            return nil
        } catch {
            let refusal = StoreError.sqlite(
                code: Self.ioErrFsync,
                message: "the write-ahead log could not be synced (\(error)); writes are refused until Hearth restarts",
                operation: "sync")
            let first: Bool = state.withLock { state in
                state.syncs += 1
                defer { if state.failure == nil { state.failure = refusal } }
                return state.failure == nil
            }
            if first { onFailure(error) }
            return refusal
        }
    }

    /// SQLITE_IOERR_FSYNC, the code SQLite gives a failed sync of its own.
    static let ioErrFsync: Int32 = 10 | (4 << 8)
}
