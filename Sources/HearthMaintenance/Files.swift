import HearthJSON
import HearthStore
#if canImport(Glibc)
import Glibc
#endif

/// A file read in chunks, as the byte source of a `JSONStreamReader` (`-` is standard input).
public final class InputFile {
    public let path: String
    private let fd: Int32

    public init(path: String) throws(MaintenanceError) {
        self.path = path
        if path == "-" {
            fd = STDIN_FILENO
            return
        }
        let opened = open(path, O_RDONLY | O_CLOEXEC)
        guard opened >= 0 else {
            let code = errno
            throw code == ENOENT ? .missing(path: path) : .io(operation: "open", path: path, errno: code)
        }
        fd = opened
    }

    deinit {
        if fd != STDIN_FILENO { close(fd) }
    }

    /// Reads up to `target.count` bytes; 0 at the end of the file.
    public func readChunk(into target: UnsafeMutableRawBufferPointer) throws(JSONStreamError) -> Int {
        while true {
            let n = read(fd, target.baseAddress, target.count)
            if n >= 0 { return n }
            if errno != EINTR { throw .source("read \(path): errno \(errno)") }
        }
    }

    /// A stream reader over the file.
    public func jsonReader(maxNesting: Int = JSONParser.maxNesting) -> JSONStreamReader {
        JSONStreamReader(maxNesting: maxNesting) { target throws(JSONStreamError) in try self.readChunk(into: target) }
    }
}

/// Output that replaces `path` only when complete: written to a temporary file (mode 0600)
/// beside it, flushed, and renamed over it by `commit()`; dropped if never committed.
/// Without a path, standard output.
public final class OutputFile {
    public let path: String?
    private let temporary: String?
    private let fd: Int32
    private var committed = false

    public init(path: String?) throws(MaintenanceError) {
        self.path = path
        guard let path else {
            temporary = nil
            fd = STDOUT_FILENO
            return
        }
        let temporary = path + ".partial-\(getpid())"
        let opened = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, LocalFiles.fileMode)
        guard opened >= 0 else { throw .io(operation: "create", path: temporary, errno: errno) }
        self.temporary = temporary
        fd = opened
    }

    deinit {
        guard let temporary else { return }
        close(fd)
        if !committed { unlink(temporary) }
    }

    public func append(_ bytes: [UInt8]) throws(MaintenanceError) {
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + done, $0.count - done) }
            if n < 0 {
                if errno == EINTR { continue }
                throw .io(operation: "write", path: path ?? "standard output", errno: errno)
            }
            done += n
        }
    }

    /// Makes the output visible under its name (for a file: fsync, then rename).
    public func commit() throws(MaintenanceError) {
        guard let path, let temporary else { return }
        guard fsync(fd) == 0 else { throw .io(operation: "fsync", path: temporary, errno: errno) }
        guard rename(temporary, path) == 0 else { throw .io(operation: "rename", path: path, errno: errno) }
        committed = true
    }
}
