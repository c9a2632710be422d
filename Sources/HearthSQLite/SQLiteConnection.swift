import CSQLite
import Dispatch
#if canImport(Glibc)
import Glibc
#endif
import HearthStore
import HearthSystem

/// One SQLite connection. Not thread-safe: every call must come from the one queue that
/// owns it (the writer queue or one reader's queue), which `assertConfined` checks in
/// debug builds (after GRDB's `SerializedDatabase` discipline).
final class SQLiteConnection {
    let handle: OpaquePointer
    private var statements: [String: SQLiteStatement] = [:]
    private let queueKey: DispatchSpecificKey<UInt8>?

    enum Mode { case readWriteCreate, readOnly }

    /// `coalescingWALWrites`: open through `WALWriteCoalescing`, only for a connection
    /// whose commits sync the WAL (`synchronous` FULL or EXTRA).
    init(path: String, mode: Mode, queueKey: DispatchSpecificKey<UInt8>? = nil, coalescingWALWrites: Bool = false) throws(StoreError) {
        if mode == .readWriteCreate { try Self.createPrivately(path) }
        var db: OpaquePointer?
        var flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE
        switch mode {
        case .readWriteCreate: flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
        case .readOnly: flags |= SQLITE_OPEN_READONLY
        }
        let vfs = coalescingWALWrites ? WALWriteCoalescing.name : nil
        let rc = sqlite3_open_v2(path, &db, flags, vfs)
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            if let db { sqlite3_close_v2(db) }
            throw StoreError.sqlite(code: rc, message: message, operation: "open")
        }
        self.handle = db
        self.queueKey = queueKey
    }

    deinit {
        statements.removeAll()
        sqlite3_close_v2(handle)
    }

    /// Creates a missing database file empty with `DatabaseFile.fileMode` (0600), so it is
    /// never readable by others whatever the umask or the folder's mode: SQLite would
    /// create it 0644 (`SQLITE_DEFAULT_FILE_PERMISSIONS`) less the umask. SQLite gives the
    /// `-wal`, `-shm` and `-journal` files it creates the main file's mode
    /// (sqlite.org/src, os_unix.c `findCreateFileMode`), and opens an empty file as a new
    /// database. An existing file is left as it is.
    private static func createPrivately(_ path: String) throws(StoreError) {
        do throws(SystemError) {
            let fd = try Syscall.openFile(path, O_WRONLY | O_CREAT | O_EXCL, mode: DatabaseFile.fileMode)
            try? Syscall.close(fd)  // a new, empty file: nothing to lose if close reports an error
        } catch where error.errno == EEXIST {
            return
        } catch {
            throw StoreError.sqlite(code: 14, message: "cannot create \(path): errno \(error.errno)", operation: "open")
        }
    }

    /// Closes now (statements first). Returns the result code of `sqlite3_close`.
    func close() {
        statements.removeAll()
    }

    /// The name of the VFS the database was opened through (`WALWriteCoalescing.name` or
    /// SQLite's default, "unix").
    var vfsName: String? {
        var vfs: UnsafeMutablePointer<sqlite3_vfs>?
        guard sqlite3_file_control(handle, "main", SQLITE_FCNTL_VFS_POINTER, &vfs) == SQLITE_OK,
              let name = vfs?.pointee.zName else { return nil }
        return String(cString: name)
    }

    func assertConfined() {
        if let queueKey { assert(DispatchQueue.getSpecific(key: queueKey) != nil, "connection used off its queue") }
    }

    func error(_ rc: Int32, _ operation: String) -> StoreError {
        .sqlite(code: rc, message: String(cString: sqlite3_errmsg(handle)), operation: operation)
    }

    /// Runs one or more statements without parameters (schema, pragmas, BEGIN/COMMIT).
    func execute(_ sql: String) throws(StoreError) {
        assertConfined()
        let rc = sqlite3_exec(handle, sql, nil, nil, nil)
        guard rc == SQLITE_OK else { throw error(rc, "exec") }
    }

    /// Runs one statement without parameters that the writer repeats (BEGIN, COMMIT,
    /// SAVEPOINT, RELEASE) from the statement cache: parsed once, not on every call as
    /// `execute` does. Reset afterwards, also when it fails.
    func executeCached(_ sql: String) throws(StoreError) {
        let stmt = try statement(sql)
        defer { sqlite3_reset(stmt.handle) }
        try stmt.reset()
        while try stmt.step() {}
    }

    /// A cached prepared statement for `sql`.
    func statement(_ sql: String) throws(StoreError) -> SQLiteStatement {
        assertConfined()
        if let cached = statements[sql] { return cached }
        let stmt = try SQLiteStatement(connection: self, sql: sql)
        statements[sql] = stmt
        return stmt
    }

    /// The first column of the first row of `sql`, as an integer.
    func scalarInt(_ sql: String) throws(StoreError) -> Int64? {
        let stmt = try statement(sql)
        try stmt.reset()
        defer { sqlite3_reset(stmt.handle) }
        return try stmt.step() ? stmt.int64(0) : nil
    }

    func scalarText(_ sql: String) throws(StoreError) -> String? {
        let stmt = try statement(sql)
        try stmt.reset()
        defer { sqlite3_reset(stmt.handle) }
        return try stmt.step() ? stmt.text(0) : nil
    }

    var totalChanges: Int64 { Int64(sqlite3_total_changes(handle)) }
}

extension SQLiteConnection {
    var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }
}
