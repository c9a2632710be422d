#if canImport(Glibc)
import Glibc
#endif

// MARK: Names in the file system, and files read and written whole

extension Syscall {
    /// `mkdir`: creates the directory `path` with `mode`. Returns false, and changes
    /// nothing, when something already has that name (`EEXIST`).
    public static func makeDirectory(_ path: String, mode: mode_t) throws(SystemError) -> Bool {
        do throws(SystemError) {
            _ = try blocking("mkdir") { Int(Glibc.mkdir(path, mode)) }
            return true
        } catch where error.errno == EEXIST {
            return false
        }
    }

    /// `unlink`: removes the name `path`. Returns false when nothing had that name (`ENOENT`).
    @discardableResult
    public static func removeFile(_ path: String) throws(SystemError) -> Bool {
        do throws(SystemError) {
            _ = try blocking("unlink") { Int(Glibc.unlink(path)) }
            return true
        } catch where error.errno == ENOENT {
            return false
        }
    }

    /// `rename`: gives `source`'s file the name `destination`, replacing what had it.
    public static func rename(_ source: String, to destination: String) throws(SystemError) {
        _ = try blocking("rename") { Int(Glibc.rename(source, destination)) }
    }

    /// `link`: a second name, `destination`, for `source`'s file. Never replaces:
    /// `EEXIST` when `destination` exists.
    public static func link(_ source: String, to destination: String) throws(SystemError) {
        _ = try blocking("link") { Int(Glibc.link(source, destination)) }
    }

    /// `access(F_OK)`: whether `path` names something this process can reach. False also
    /// when a directory on the way cannot be searched.
    public static func exists(_ path: String) -> Bool {
        (try? blocking("access") { Int(Glibc.access(path, F_OK)) }) != nil
    }

    /// `stat` (or `lstat`, which describes a symbolic link itself): what `path` names, or
    /// nil when nothing does (`ENOENT`, or `ENOTDIR` for a path through a file).
    public static func status(_ path: String, followingLinks: Bool = true) throws(SystemError) -> stat? {
        var info = stat()
        do throws(SystemError) {
            if followingLinks {
                _ = try blocking("stat") { Int(stat(path, &info)) }
            } else {
                _ = try blocking("lstat") { Int(Glibc.lstat(path, &info)) }
            }
            return info
        } catch where error.errno == ENOENT || error.errno == ENOTDIR {
            return nil
        }
    }

    /// The type bits of what `fd` is open on (`fstat`'s `st_mode & S_IFMT`: `S_IFIFO`,
    /// `S_IFSOCK`, `S_IFREG`, …), or nil when `fstat` fails (a closed descriptor included).
    public static func fileType(_ fd: Int32) -> mode_t? {
        var info = stat()
        while true {
            if fstat(fd, &info) == 0 { return info.st_mode & S_IFMT }
            if Glibc.errno != EINTR { return nil }
        }
    }

    /// Whether `fd` is an open descriptor (`fcntl(F_GETFD)`).
    public static func isOpen(_ fd: Int32) -> Bool {
        while true {
            if Glibc.fcntl(fd, F_GETFD) >= 0 { return true }
            if Glibc.errno != EINTR { return false }
        }
    }

    /// Opens `/dev/null` as each of descriptors 0, 1 and 2 that is closed, and returns
    /// those it opened. Call it first thing in `main`. A process started with one of them
    /// closed (`hearth serve 2>&-`) would otherwise hand that number to the next file or
    /// socket it opens, and whatever is written to "standard error" would go into it: log
    /// lines into a data directory's file, or to a client's connection. `open` returns the
    /// lowest free number, so filling them in order gives each its own.
    @discardableResult
    public static func openClosedStandardStreams() -> [Int32] {
        var opened: [Int32] = []
        for fd: Int32 in 0...2 where !isOpen(fd) {
            // Not close-on-exec: a standard stream is inherited, as it would have been.
            guard let new = try? blocking("open", { Int(Glibc.open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY)) }) else { break }
            guard new == Int(fd) else {
                try? close(Int32(new))
                break
            }
            opened.append(fd)
        }
        return opened
    }

    /// One blocking `read` of up to `buffer.count` bytes; 0 at the end of the file.
    public static func readSome(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(SystemError) -> Int {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        return try blocking("read") { Glibc.read(fd, base, buffer.count) }
    }

    /// Writes `bytes` to `fd` as far as it goes, for output that must never stop the
    /// process: a log line, a message on standard error. `EINTR` is retried; any other
    /// failure, `EBADF` included (standard error closed by whoever started us), ends the
    /// write and returns false instead of trapping as the other calls here do.
    @discardableResult
    public static func writeBestEffort(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Bool {
        var offset = 0
        while offset < bytes.count {
            guard let count = writeSomeBestEffort(fd, UnsafeRawBufferPointer(rebasing: bytes[offset...])), count > 0 else { return false }
            offset += count
        }
        return true
    }

    /// One `write` of at most `bytes.count` bytes, for the same output: the bytes written,
    /// 0 when a non-blocking `fd` is full (`EAGAIN`), nil on any other failure (`EBADF`
    /// included; never a trap). `EINTR` is retried.
    public static func writeSomeBestEffort(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Int? {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return 0 }
        while true {
            let count = Glibc.write(fd, base, bytes.count)
            if count >= 0 { return count }
            switch Glibc.errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return 0
            default: return nil
            }
        }
    }

}
