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

    public var description: String {
        switch self {
        case .sqlite(let code, let message, let operation):
            return "sqlite \(operation) failed (\(code)): \(message)"
        case .corrupt(let what): return "corrupt store: \(what)"
        case .closed: return "store is closed"
        case .schemaTooNew(let found, let known):
            return "database schema version \(found) is newer than this binary's \(known)"
        }
    }

    /// SQLITE_BUSY or SQLITE_LOCKED: another process holds the database.
    public var isBusy: Bool {
        if case .sqlite(let code, _, _) = self { return code & 0xFF == 5 || code & 0xFF == 6 }
        return false
    }
}
