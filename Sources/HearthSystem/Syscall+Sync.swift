#if canImport(Glibc)
import Glibc
#endif

// MARK: Files made durable

extension Syscall {
    /// Opens `path` read-only and close-on-exec: a descriptor to sync a file or a directory
    /// through (`syncData`, `syncAll`); Linux syncs the file, not the descriptor.
    public static func openForSync(_ path: String) throws(SystemError) -> Int32 {
        Int32(try blocking("open") { Int(Glibc.open(path, O_RDONLY | O_CLOEXEC)) })
    }

    /// Opens `path` with `flags` (close-on-exec added), creating it with `mode` when
    /// `flags` has `O_CREAT`.
    public static func openFile(_ path: String, _ flags: Int32, mode: mode_t = 0) throws(SystemError) -> Int32 {
        Int32(try blocking("open") { Int(Glibc.open(path, flags | O_CLOEXEC, mode)) })
    }

    /// `posix_fallocate`: gives the first `bytes` of the file blocks on the volume (the file
    /// grows to `bytes` if shorter). It returns its error number instead of setting `errno`,
    /// so it is retried here rather than through `blocking`.
    public static func allocate(_ fd: Int32, bytes: Int) throws(SystemError) {
        while true {
            let code = posix_fallocate(fd, 0, off_t(bytes))
            if code == 0 { return }
            if code == EINTR { continue }
            if code == EBADF { preconditionFailure("posix_fallocate: EBADF is a bug in the caller") }
            throw SystemError(errno: code, call: "posix_fallocate")
        }
    }

    /// `fdatasync`: returns once the file's data, and the metadata needed to read it back
    /// (its size), are on the disk.
    public static func syncData(_ fd: Int32) throws(SystemError) {
        _ = try blocking("fdatasync") { Int(Glibc.fdatasync(fd)) }
    }

    /// `fsync`: the file's data and all its metadata; for a directory, the names in it.
    public static func syncAll(_ fd: Int32) throws(SystemError) {
        _ = try blocking("fsync") { Int(Glibc.fsync(fd)) }
    }

    /// The device and inode numbers of an open file (`fstat`), to tell which file a
    /// descriptor is.
    public static func identity(_ fd: Int32) throws(SystemError) -> (device: UInt64, inode: UInt64) {
        var info = stat()
        _ = try blocking("fstat") { Int(fstat(fd, &info)) }
        return (UInt64(info.st_dev), UInt64(info.st_ino))
    }
}
