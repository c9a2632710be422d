import CSQLite
import Dispatch
import HearthStore
import Synchronization

/// Checkpoints the WAL on its own connection and queue, so the writer never does.
/// SQLite's automatic checkpoint runs inside the COMMIT that crosses
/// `wal_autocheckpoint` pages: the writer copied ~1,000 pages into the database file and
/// synced it while the next batch waited, which cost ~7 % of the create rate.
///
/// The writer's connection gets a WAL hook instead (`attach`), which replaces the automatic
/// checkpoint (sqlite.org/c3ref/wal_hook.html); after each commit it asks for a checkpoint
/// once the WAL holds `framesPerCheckpoint` frames. The checkpoint is PASSIVE, as the
/// automatic one is: it copies what no reader still needs and never blocks the writer or
/// a reader; the writer starts the WAL over once a checkpoint has copied all of it.
/// Requests made while one is queued are one request.
///
/// Under a steady write load a checkpoint on another connection never catches up with the
/// writer, and the WAL starts over only when one has copied all of it: so once the WAL
/// holds `framesBeforeTheWriterCheckpoints` frames, the writer checkpoints after its COMMIT
/// itself, as SQLite would. By then the checkpointer has copied all but the newest frames,
/// so the writer copies only those, and the WAL stays within about that many frames.
///
/// `@unchecked Sendable`: `connection` is only touched on `queue`; `scheduled` and `runs`
/// are atomics.
final class WALCheckpointer: @unchecked Sendable {
    /// Frames in the WAL after a commit that start a checkpoint: SQLite's own default for
    /// `wal_autocheckpoint` (SQLITE_DEFAULT_WAL_AUTOCHECKPOINT).
    static let framesPerCheckpoint: Int32 = 1_000
    /// Frames in the WAL after a commit at which the writer checkpoints the rest itself,
    /// so the WAL can start over (~16 MiB at 4 KiB pages).
    static let framesBeforeTheWriterCheckpoints: Int32 = 4 * framesPerCheckpoint

    private let queue = DispatchQueue(label: "hearth.store.checkpoint")
    private let key = DispatchSpecificKey<UInt8>()
    private var connection: SQLiteConnection?  // confined to `queue`
    private let scheduled = Atomic<Bool>(false)
    /// The WAL's frames after the last commit, and the count at which the next checkpoint
    /// is asked for (touched only in `committed`, on the writer's thread).
    private let lastFrames = Atomic<Int32>(0)
    private let nextRequest = Atomic<Int32>(WALCheckpointer.framesPerCheckpoint)
    /// Checkpoints run so far (tests, and a sign that the hook is attached).
    let runs = Atomic<Int>(0)

    /// Opens the checkpointer's own connection to the database at `path` (which must
    /// exist), syncing as `synchronous` says, as the writer does.
    init(path: String, synchronous: String, busyTimeoutMilliseconds: Int) throws(StoreError) {
        queue.setSpecific(key: key, value: 1)
        let connection = try SQLiteConnection(path: path, mode: .readWriteCreate, queueKey: key)
        let opened: Result<SQLiteConnection, StoreError> = queue.sync {
            Result { () throws(StoreError) -> SQLiteConnection in
                try connection.execute("PRAGMA busy_timeout = \(busyTimeoutMilliseconds)")
                try connection.execute("PRAGMA synchronous = \(synchronous)")
                return connection
            }
        }
        self.connection = try opened.get()
    }

    /// Hooks the writer's commits (call on the writer's queue). The writer connection must
    /// not outlive this object while attached: `detach` first.
    func attach(to writer: SQLiteConnection) {
        let context = Unmanaged.passUnretained(self).toOpaque()
        sqlite3_wal_hook(writer.handle, { context, db, _, frames in
            guard let context else { return SQLITE_OK }
            let checkpointer = Unmanaged<WALCheckpointer>.fromOpaque(context).takeUnretainedValue()
            checkpointer.committed(frames: frames, writer: db)
            return SQLITE_OK
        }, context)
    }

    /// After each of the writer's commits, on the writer's thread, with the frames the WAL
    /// now holds: a checkpoint every `framesPerCheckpoint` new frames, and the writer's own
    /// at `framesBeforeTheWriterCheckpoints`. (Asking after every commit past the first, as
    /// SQLite does,
    /// made the checkpointer sync the files after every commit: +20 % server CPU.)
    private func committed(frames: Int32, writer: OpaquePointer?) {
        if frames < lastFrames.load(ordering: .relaxed) {
            // The writer started the WAL over.
            nextRequest.store(Self.framesPerCheckpoint, ordering: .relaxed)
        }
        lastFrames.store(frames, ordering: .relaxed)
        if frames >= Self.framesBeforeTheWriterCheckpoints, let writer {
            // SQLITE_BUSY while the checkpointer runs: the next commit tries again.
            _ = sqlite3_wal_checkpoint_v2(writer, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
        } else if frames >= nextRequest.load(ordering: .relaxed) {
            nextRequest.store(frames + Self.framesPerCheckpoint, ordering: .relaxed)
            request()
        }
    }

    /// Removes the hook and gives the writer SQLite's automatic checkpoint back (call on
    /// the writer's queue).
    func detach(from writer: SQLiteConnection) {
        sqlite3_wal_autocheckpoint(writer.handle, Self.framesPerCheckpoint)
    }

    /// Asks for a checkpoint soon; returns at once.
    func request() {
        if scheduled.exchange(true, ordering: .acquiringAndReleasing) { return }
        queue.async {
            self.scheduled.store(false, ordering: .releasing)
            self.checkpoint()
        }
    }

    /// Returns once every checkpoint requested so far has run (tests).
    func waitIdle() {
        queue.sync {}
    }

    private func checkpoint() {
        guard let connection else { return }
        // SQLITE_BUSY: another checkpoint (the writer's TRUNCATE on a full disk, or at
        // close) holds the lock; it does the work. Other failures leave the WAL to the
        // next request, as a failed automatic checkpoint would.
        _ = sqlite3_wal_checkpoint_v2(connection.handle, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
        runs.add(1, ordering: .relaxed)
    }

    /// Waits for a running checkpoint and closes the connection; later requests do nothing.
    func close() {
        queue.sync { connection = nil }
    }
}
