#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// Advisory record locks (`fcntl` `F_SETLK`) on bytes of one file, held until `release()`
/// or until the process ends: the kernel drops them when their process dies, SIGKILL
/// included, so a lock is never stale. A conflict names the holding process's pid, as the
/// kernel reports it (`F_GETLK`).
///
/// These are POSIX process locks: a process never conflicts with itself, and closing *any*
/// descriptor of the file in the process would drop all its locks on it. So a process opens
/// one file through one `RecordLock` only, and nothing else opens that file.
public final class RecordLock: Sendable {
    public let path: String
    private let fd: Int32
    private let open = Mutex(true)

    /// Opens (creating, mode `mode`) the lock file.
    public init(path: String, mode: mode_t = 0o600) throws(SystemError) {
        self.path = path
        fd = Int32(try Syscall.blocking("open") { Int(Glibc.open(path, O_RDWR | O_CREAT | O_CLOEXEC, mode)) })
    }

    /// Takes byte `byte` shared or exclusive without waiting. nil when taken; otherwise the
    /// pid of a process holding a conflicting lock (0 if it let go in between).
    public func tryLock(byte: Int, exclusive: Bool) throws(SystemError) -> Int32? {
        var request = Self.range(byte: byte, type: exclusive ? F_WRLCK : F_RDLCK)
        do {
            // A conflict is EAGAIN or EACCES, depending on the system.
            if case .done = try Syscall.retrying("fcntl(F_SETLK)", { Int(fcntl(fd, F_SETLK, &request)) }) { return nil }
        } catch where error.errno == EACCES {
        }
        var probe = Self.range(byte: byte, type: exclusive ? F_WRLCK : F_RDLCK)
        _ = try Syscall.blocking("fcntl(F_GETLK)") { Int(fcntl(fd, F_GETLK, &probe)) }
        return probe.l_type == Int16(F_UNLCK) ? 0 : probe.l_pid
    }

    /// Closes the file, which drops every lock this process holds on it.
    public func release() {
        let wasOpen = open.withLock { isOpen in
            defer { isOpen = false }
            return isOpen
        }
        if wasOpen { try? Syscall.close(fd) }
    }

    deinit { release() }

    private static func range(byte: Int, type: Int32) -> flock {
        var lock = flock()
        lock.l_type = Int16(type)
        lock.l_whence = Int16(SEEK_SET)
        lock.l_start = off_t(byte)
        lock.l_len = 1
        return lock
    }
}
