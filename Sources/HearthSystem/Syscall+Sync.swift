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
