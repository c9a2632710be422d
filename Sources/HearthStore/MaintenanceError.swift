import HearthJSON
#if canImport(Glibc)
import Glibc
#endif

/// Why an operator's tool (backup, restore, export, import) stopped. Nothing was changed
/// when one of these is thrown: imports and restores run in one transaction, backups are
/// written under a temporary name first.
public enum MaintenanceError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Another process (a running server, another tool) has the database open.
    case inUse(path: String)
    /// The destination exists and is not overwritten.
    case exists(path: String)
    /// There is no database (or input file) at `path`.
    case missing(path: String)
    /// A system call failed.
    case io(operation: String, path: String, errno: Int32)
    /// The file is not a Hearth database (no known schema).
    case notHearthDatabase(path: String, reason: String)
    /// `PRAGMA integrity_check` did not answer "ok"; its first line.
    case integrity(path: String, report: String)
    /// The database was written by a newer Hearth.
    case schemaTooNew(found: Int, known: Int)
    /// The input is not JSON (with the byte offset).
    case json(JSONStreamError)
    /// The input is JSON but not a valid tree: a bad key, too deep, a string too long.
    case tree(TreeError)
    /// An object holds the same key twice (`JSON.parse` would keep the last; an import
    /// refuses, as it more likely means a damaged file).
    case duplicateKey(at: DataPath)
    /// A server value (`.sv`) in imported data: there is no write time to resolve it to.
    case serverValue(under: DataPath)
    /// SQLite failed.
    case store(StoreError)

    public var description: String {
        switch self {
        case .inUse(let path):
            return "\(path) is in use by another process (is the server running?); stop it first"
        case .exists(let path): return "\(path) already exists; refusing to overwrite it"
        case .missing(let path): return "no such file or directory: \(path)"
        case .io(let operation, let path, let errno): return "\(operation) \(path) failed: \(Self.errnoText(errno))"
        case .notHearthDatabase(let path, let reason): return "\(path) is not a Hearth database: \(reason)"
        case .integrity(let path, let report): return "\(path) failed PRAGMA integrity_check: \(report)"
        case .schemaTooNew(let found, let known):
            return "database schema version \(found) is newer than this binary's \(known)"
        case .json(let error): return error.description
        case .tree(let error): return error.description
        case .duplicateKey(let path): return "Invalid data at \(path): the key appears twice in its object"
        case .serverValue(let path): return "Invalid data at \(path): server values (.sv) cannot be imported"
        case .store(let error): return error.description
        }
    }

    private static func errnoText(_ code: Int32) -> String {
        "\(String(cString: strerror(code))) (errno \(code))"
    }
}
