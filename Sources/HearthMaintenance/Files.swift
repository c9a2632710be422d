import HearthJSON
import HearthStore
import HearthSystem
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
        do throws(SystemError) {
            fd = try Syscall.openFile(path, O_RDONLY)
        } catch {
            throw error.errno == ENOENT ? .missing(path: path) : .io(operation: "open", path: path, errno: error.errno)
        }
    }

    deinit {
        if fd != STDIN_FILENO { try? Syscall.close(fd) }
    }

    /// Reads up to `target.count` bytes; 0 at the end of the file.
    public func readChunk(into target: UnsafeMutableRawBufferPointer) throws(JSONStreamError) -> Int {
        do throws(SystemError) {
            return try Syscall.readSome(fd, into: target)
        } catch {
            throw .source("read \(path): errno \(error.errno)")
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
        do throws(SystemError) {
            fd = try Syscall.openFile(temporary, O_WRONLY | O_CREAT | O_EXCL, mode: LocalFiles.fileMode)
        } catch {
            throw .io(operation: "create", path: temporary, errno: error.errno)
        }
        self.temporary = temporary
    }

    deinit {
        guard let temporary else { return }
        try? Syscall.close(fd)
        if !committed { _ = try? Syscall.removeFile(temporary) }
    }

    public func append(_ bytes: [UInt8]) throws(MaintenanceError) {
        do throws(SystemError) {
            try Syscall.writeAll(fd, bytes)
        } catch {
            throw .io(operation: "write", path: path ?? "standard output", errno: error.errno)
        }
    }

    /// Makes the output visible under its name (for a file: fsync, then rename).
    public func commit() throws(MaintenanceError) {
        guard let path, let temporary else { return }
        do throws(SystemError) { try Syscall.syncAll(fd) } catch { throw .io(operation: "fsync", path: temporary, errno: error.errno) }
        do throws(SystemError) { try Syscall.rename(temporary, to: path) } catch { throw .io(operation: "rename", path: path, errno: error.errno) }
        committed = true
    }
}
