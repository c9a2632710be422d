/// What an engine reported when an operation failed, in terms every engine shares:
/// which engine, its own code (SQLite's extended result code, PostgreSQL's
/// SQLSTATE), the class of failure the layers above act on, its message and the operation.
/// Never bound arguments: they may hold user data.
public struct EngineFailure: Sendable, Equatable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        /// Another process or node holds a lock; a later try may work.
        case busy
        /// The volume or the database is full: writes may work again once space is freed.
        case full
        /// The engine gave up on a transaction to keep it serialisable (a deadlock or a
        /// serialisation failure): running the transaction again is safe.
        case conflict
        /// The engine cannot be reached (connection lost, server shutting down).
        case unavailable
        /// A constraint (unique key, foreign key) refused the statement.
        case constraint
        case other
    }

    public var engine: String
    public var code: String
    public var kind: Kind
    public var message: String
    public var operation: String

    public init(engine: String, code: String, kind: Kind, message: String, operation: String) {
        (self.engine, self.code, self.kind, self.message, self.operation) = (engine, code, kind, message, operation)
    }

    public var description: String { "\(engine) \(operation) failed (\(code)): \(message)" }
}

/// Errors from the store, whatever its engine.
public enum StoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The engine answered a failure to an operation.
    case engine(EngineFailure)
    /// The stored data does not decode (a row with an unknown kind).
    case corrupt(String)
    /// The store was closed; no more work is accepted.
    case closed
    /// The database's schema is newer than this binary knows.
    case schemaTooNew(found: Int, known: Int)
    /// The volume holding the data has too little free space to take writes (found by the
    /// readiness check while writes are being refused for lack of space; `DiskSpace`).
    case storageFull(String)

    /// SQLite answered `code` (an extended result code) to `operation` ("prepare", "step", "open").
    public static func sqlite(code: Int32, message: String, operation: String) -> StoreError {
        let kind: EngineFailure.Kind
        switch code & 0xFF {
        case 13: kind = .full
        case 5, 6: kind = .busy
        case 19: kind = .constraint
        default: kind = .other
        }
        return .engine(EngineFailure(engine: "sqlite", code: String(code), kind: kind, message: message, operation: operation))
    }

    /// The SQLite extended result code, when SQLite failed.
    public var sqliteCode: Int32? {
        guard case .engine(let failure) = self, failure.engine == "sqlite" else { return nil }
        return Int32(failure.code)
    }

    public var description: String {
        switch self {
        case .engine(let failure): return failure.description
        case .corrupt(let what): return "corrupt store: \(what)"
        case .closed: return "store is closed"
        case .schemaTooNew(let found, let known):
            return "database schema version \(found) is newer than this binary's \(known)"
        case .storageFull(let reason):
            return "storage full: \(reason)"
        }
    }

    /// The volume or the database is full, or a readiness check found too little space: a
    /// write may work again once space is freed, nothing is wrong with the data.
    public var isDiskFull: Bool {
        switch self {
        case .engine(let failure): return failure.kind == .full
        case .storageFull: return true
        default: return false
        }
    }

    /// Another process holds the database (SQLITE_BUSY, SQLITE_LOCKED, a lock timeout).
    public var isBusy: Bool {
        if case .engine(let failure) = self { return failure.kind == .busy }
        return false
    }

    /// The engine dropped a transaction to keep writes serialisable; running it again is safe.
    public var isConflict: Bool {
        if case .engine(let failure) = self { return failure.kind == .conflict }
        return false
    }
}
