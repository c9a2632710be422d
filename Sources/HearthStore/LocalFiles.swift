import HearthSystem
#if canImport(Glibc)
import Glibc
#endif

/// Files and directories Hearth keeps on a local volume (a data directory, its lock, backups,
/// exports), whatever engine's: their modes, creating and flushing them.
public enum LocalFiles {
    /// Files Hearth writes hold user data: owner read/write only.
    public static let fileMode: mode_t = 0o600
    /// Data and backup directories: owner only.
    public static let directoryMode: mode_t = 0o700

    /// Creates `directory` (mode 0700) unless it exists.
    public static func makeDirectory(_ directory: String) throws(MaintenanceError) {
        do throws(SystemError) {
            _ = try Syscall.makeDirectory(directory, mode: directoryMode)
        } catch {
            throw .io(operation: "create directory", path: directory, errno: error.errno)
        }
    }

    /// Flushes a file or directory to disk.
    public static func syncFile(_ path: String) throws(MaintenanceError) {
        let fd: Int32
        do throws(SystemError) { fd = try Syscall.openForSync(path) } catch { throw .io(operation: "open", path: path, errno: error.errno) }
        defer { try? Syscall.close(fd) }
        do throws(SystemError) { try Syscall.syncAll(fd) } catch { throw .io(operation: "fsync", path: path, errno: error.errno) }
    }
}
