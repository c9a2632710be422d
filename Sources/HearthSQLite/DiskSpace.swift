import HearthStore
import HearthSystem
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Space on the data volume, and the reserve that lets deletes commit when it is full.
///
/// A full disk makes SQLite refuse every commit with `SQLITE_FULL`, deletes included (the
/// WAL grows by the pages a delete touches), so an operator could not free space through
/// the API. The store therefore keeps `reserveBytes` allocated in a file of its own beside
/// the database (`hearth.reserve`). When a batch fails for lack of space, its writes that
/// only delete are retried once with the reserve released, and the WAL is checkpointed and
/// truncated after they commit; then the reserve is allocated again as far as space allows.
///
/// While writes are being refused for lack of space the store is *full*: the readiness
/// check answers not ready until the reserve is whole again and a probe file of
/// `reserveBytes` can be allocated beside it (so at least that much is free for writes).
///
/// Everything except `isFull` is confined to the writer queue.
public final class DiskSpace: Sendable {
    /// Bytes held back for deletes on a full disk (`StorageEvent.reserveBytes`).
    public static let reserveBytes = StorageEvent.reserveBytes
    public static let reserveFileName = "hearth.reserve"
    static let probeFileName = "hearth.reserve.probe"

    let directory: String
    let bytes: Int
    private let full = Atomic<Bool>(false)
    private let observe: @Sendable (StorageEvent) -> Void

    init(directory: String, bytes: Int = DiskSpace.reserveBytes, observe: @escaping @Sendable (StorageEvent) -> Void) {
        self.directory = directory
        self.bytes = bytes
        self.observe = observe
    }

    var reservePath: String { directory + "/" + Self.reserveFileName }
    var probePath: String { directory + "/" + Self.probeFileName }

    /// True from a write refused for lack of space until the readiness check saw space again.
    var isFull: Bool { full.load(ordering: .acquiring) }

    /// Allocates the reserve at start; a volume too full for it is reported, not fatal.
    func start() {
        _ = try? Syscall.removeFile(probePath)  // left by a crash between allocate and unlink
        if !FileSpace.allocate(reservePath, bytes: bytes) {
            observe(.reserveUnavailable(directory: directory))
        }
    }

    /// Records a write refused for lack of space.
    func noteRefused() {
        observe(.writeRefused)
        if !full.exchange(true, ordering: .acquiringAndReleasing) {
            observe(.becameFull(directory: directory))
        }
    }

    /// Frees the reserve for a delete that could not commit without it.
    func release() {
        _ = try? Syscall.removeFile(reservePath)
    }

    /// Allocates the reserve again (as far as space allows; true when whole).
    @discardableResult
    func restore() -> Bool {
        FileSpace.allocate(reservePath, bytes: bytes)
    }

    /// While full: whether space came back (the reserve is whole and `bytes` more can be
    /// allocated). Clears the full state when it did. Nil when writes are expected to commit.
    func readinessProblem() -> StoreError? {
        guard isFull else { return nil }
        guard restore() else {
            return .storageFull("cannot hold the \(bytes)-byte reserve in \(directory)")
        }
        let headroom = FileSpace.allocate(probePath, bytes: bytes)
        _ = try? Syscall.removeFile(probePath)
        guard headroom else {
            return .storageFull("less than \(bytes) bytes free beside the reserve in \(directory)")
        }
        if full.exchange(false, ordering: .acquiringAndReleasing) { observe(.recovered) }
        return nil
    }
}

/// Allocating a file's blocks, through the syscall wrapper (`EINTR` retried, the
/// descriptor closed on every path).
enum FileSpace {
    /// Makes `path` (created 0600 if missing) `bytes` long with every block allocated.
    /// False when the volume has no room for it (whatever was allocated stays).
    static func allocate(_ path: String, bytes: Int) -> Bool {
        guard let fd = try? Syscall.openFile(path, O_WRONLY | O_CREAT, mode: DatabaseFile.fileMode) else { return false }
        defer { try? Syscall.close(fd) }
        return (try? Syscall.allocate(fd, bytes: bytes)) != nil
    }
}
