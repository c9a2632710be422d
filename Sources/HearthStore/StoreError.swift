/// Errors from the store. Descriptions carry the SQLite result code, its message and the
/// operation, never bound arguments (they may hold user data).
public enum StoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// SQLite answered `code` to `operation` (e.g. "prepare", "step", "open").
    case sqlite(code: Int32, message: String, operation: String)
    /// The stored data does not decode (a row with an unknown kind).
    case corrupt(String)
    /// The store was closed; no more work is accepted.
    case closed
    /// The database's schema is newer than this binary knows.
    case schemaTooNew(found: Int, known: Int)
    /// The volume holding the data has too little free space to take writes (found by the
    /// readiness check while writes are being refused for lack of space; `DiskSpace`).
    case storageFull(String)

    public var description: String {
        switch self {
        case .sqlite(let code, let message, let operation):
            return "sqlite \(operation) failed (\(code)): \(message)"
        case .corrupt(let what): return "corrupt store: \(what)"
        case .closed: return "store is closed"
        case .schemaTooNew(let found, let known):
            return "database schema version \(found) is newer than this binary's \(known)"
        case .storageFull(let reason):
            return "storage full: \(reason)"
        }
    }

    /// SQLITE_FULL (the volume is full, or the database reached its size limit), or a
    /// readiness check that found too little space: a write may work again once space is
    /// freed, nothing is wrong with the data.
    public var isDiskFull: Bool {
        switch self {
        case .sqlite(let code, _, _): return code & 0xFF == 13
        case .storageFull: return true
        default: return false
        }
    }

    /// SQLITE_BUSY or SQLITE_LOCKED: another process holds the database.
    public var isBusy: Bool {
        if case .sqlite(let code, _, _) = self { return code & 0xFF == 5 || code & 0xFF == 6 }
        return false
    }
}
