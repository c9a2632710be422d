import CSQLite
#if canImport(Glibc)
import Glibc
#endif
import HearthStore
import HearthSystem

/// The database file as operators' tools see it: consistent copies with SQLite's online
/// backup API, restores, and exclusive access for tools that must not run beside a server.
///
/// * A backup reads one snapshot (one read transaction, WAL), so it runs while the server
///   writes and never blocks it; the copy is written under the destination name only
///   when it is complete and passes `PRAGMA integrity_check`.
/// * Restores and imports take the database exclusively (`locking_mode=EXCLUSIVE`): while
///   any other process has the file open they stop with `inUse`, and while they run no
///   server can start on the file.
public enum DatabaseFile {
    /// Files Hearth writes hold user data: owner read/write only (`LocalFiles`).
    public static let fileMode = LocalFiles.fileMode
    /// Data and backup directories: owner only (`LocalFiles`).
    public static let directoryMode = LocalFiles.directoryMode
    /// How far a restore moves the change-log sequence past the highest one it knows of,
    /// so an event id a client saw before the restore (possibly from writes made after the
    /// backup) is never mistaken for one of the restored log: streams resuming with it get
    /// a fresh snapshot.
    public static let restoreSequenceGap: Int64 = 1 << 32

    // MARK: Opening

    /// A connection to an existing database, for reading beside a running server.
    static func openExisting(_ path: String) throws(MaintenanceError) -> SQLiteConnection {
        guard Syscall.exists(path) else { throw .missing(path: path) }
        let connection = try store { () throws(StoreError) in try SQLiteConnection(path: path, mode: .readWriteCreate) }
        try store { () throws(StoreError) in try connection.execute("PRAGMA busy_timeout = \(StoreOptions.defaultBusyTimeoutMilliseconds)") }
        return connection
    }

    /// A connection that holds the database exclusively until it is closed (creating the
    /// file if needed); `inUse` while another process has it open.
    static func openExclusive(_ path: String) throws(MaintenanceError) -> SQLiteConnection {
        let connection = try store { () throws(StoreError) in try SQLiteConnection(path: path, mode: .readWriteCreate) }
        do {
            try connection.execute("PRAGMA busy_timeout = 0")
            try connection.execute("PRAGMA locking_mode = EXCLUSIVE")
            try connection.execute("BEGIN EXCLUSIVE")
            try connection.execute("COMMIT")
        } catch {
            if error.isBusy { throw .inUse(path: path) }
            throw .store(error)
        }
        return connection
    }

    /// The schema version of a Hearth database; refuses anything else.
    @discardableResult
    static func checkSchema(_ connection: SQLiteConnection, path: String) throws(MaintenanceError) -> Int {
        let version: Int
        let tables: Int64
        do {
            version = Int(try connection.scalarInt("PRAGMA user_version") ?? 0)
            tables = try connection.scalarInt(
                "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('nodes', 'changes')") ?? 0
        } catch {
            if let code = error.sqliteCode, code & 0xFF == SQLITE_NOTADB {
                throw .notHearthDatabase(path: path, reason: "not an SQLite database")
            }
            throw .store(error)
        }
        guard version >= 1, tables == 2 else {
            throw .notHearthDatabase(path: path, reason: "no Hearth schema (user_version \(version))")
        }
        guard version <= Schema.currentVersion else { throw .schemaTooNew(found: version, known: Schema.currentVersion) }
        return version
    }

    /// The most lines of `PRAGMA integrity_check` read (SQLite's own default limit).
    static let integrityReportLines = 100

    /// `PRAGMA integrity_check` must answer exactly "ok", or report only SQLite's known
    /// false positive on a database older than schema 9 (`IntegrityReport`).
    static func checkIntegrity(_ connection: SQLiteConnection, path: String) throws(MaintenanceError) {
        var lines: [String] = []
        do {
            let stmt = try connection.statement("PRAGMA integrity_check(\(integrityReportLines))")
            try stmt.reset()
            defer { sqlite3_reset(stmt.handle) }
            while try stmt.step() { lines.append(stmt.text(0)) }
        } catch {
            if let code = error.sqliteCode, code & 0xFF == SQLITE_NOTADB || code & 0xFF == SQLITE_CORRUPT {
                throw .integrity(path: path, report: error.description)
            }
            throw .store(error)
        }
        guard lines != ["ok"] else { return }
        let columns = IntegrityReport.falsePositiveColumns(lines)
        if !columns.isEmpty, (try? IntegrityReport.holdsNoNull(connection, columns: columns)) == true { return }
        throw .integrity(path: path, report: lines.first ?? "")
    }

    /// Checks that `path` holds an intact Hearth database of a known schema version (what a
    /// restore checks first). Returns the schema version.
    @discardableResult
    public static func verify(databaseAt path: String) throws(MaintenanceError) -> Int {
        let connection = try openExisting(path)
        defer { connection.close() }
        try checkIntegrity(connection, path: path)
        return try checkSchema(connection, path: path)
    }

    // MARK: Backup

    /// Copies the database at `source` to the new file `destination` (mode 0600) with the
    /// online backup API, in one step: one consistent snapshot, taken while a server may be
    /// writing. The copy uses a rollback journal (one self-contained file) and is checked
    /// with `PRAGMA integrity_check`; on any failure it is removed. `destination` must not
    /// exist.
    public static func backup(databaseAt source: String, to destination: String) throws(MaintenanceError) {
        let from = try openExisting(source)
        defer { from.close() }
        try checkSchema(from, path: source)
        try createNewFile(destination)
        do throws(MaintenanceError) {
            let to = try store { () throws(StoreError) in try SQLiteConnection(path: destination, mode: .readWriteCreate) }
            try copy(from: from, to: to, destinationPath: destination)
            try store { () throws(StoreError) in try to.execute("PRAGMA journal_mode = DELETE") }
            try checkIntegrity(to, path: destination)
            to.close()
            try LocalFiles.syncFile(destination)
        } catch {
            _ = try? Syscall.removeFile(destination)
            _ = try? Syscall.removeFile(destination + "-journal")
            throw error
        }
    }

    /// Runs the backup API from `from` into `to` in one step.
    private static func copy(from: SQLiteConnection, to: SQLiteConnection, destinationPath: String) throws(MaintenanceError) {
        guard let backup = sqlite3_backup_init(to.handle, "main", from.handle, "main") else {
            throw .store(to.error(sqlite3_errcode(to.handle), "backup"))
        }
        let step = sqlite3_backup_step(backup, -1)
        let finish = sqlite3_backup_finish(backup)
        guard step == SQLITE_DONE else {
            let error = StoreError.sqlite(code: step, message: String(cString: sqlite3_errstr(step)), operation: "backup")
            throw error.isBusy ? .inUse(path: destinationPath) : .store(error)
        }
        guard finish == SQLITE_OK else { throw .store(to.error(finish, "backup")) }
    }

    // MARK: Restore

    /// Replaces (or creates) the database of `directory` with the verified copy at
    /// `source`. Without `force`, a directory that already has a database is refused; with
    /// it, the database is overwritten in one transaction, and only while no other process
    /// uses it. The restored change log is emptied and its sequence moved past every id
    /// seen before (`restoreSequenceGap`), so resuming streams get a fresh snapshot.
    public static func restore(from source: String, intoDirectory directory: String, force: Bool) throws(MaintenanceError) {
        try verify(databaseAt: source)
        try LocalFiles.makeDirectory(directory)
        let target = directory + "/" + SQLiteTreeStore.fileName
        let from = try openExisting(source)
        defer { from.close() }
        if Syscall.exists(target) {
            guard force else { throw .exists(path: target) }
            let to = try openExclusive(target)
            defer { to.close() }
            let before = (try? ChangeLogReader(connection: to).lastSeq()) ?? 0
            try copy(from: from, to: to, destinationPath: target)
            try inTransaction(to) { () throws(MaintenanceError) in
                try store { () throws(StoreError) in try resetChangeLog(to, after: before, gap: restoreSequenceGap) }
            }
            try checkIntegrity(to, path: target)
            return
        }
        // A new file under a temporary name, linked into place only when complete.
        let temporary = target + ".restoring"
        _ = try? Syscall.removeFile(temporary)
        _ = try? Syscall.removeFile(temporary + "-journal")
        try createNewFile(temporary)
        do throws(MaintenanceError) {
            let to = try store { () throws(StoreError) in try SQLiteConnection(path: temporary, mode: .readWriteCreate) }
            try copy(from: from, to: to, destinationPath: temporary)
            try store { () throws(StoreError) in try to.execute("PRAGMA journal_mode = DELETE") }
            try inTransaction(to) { () throws(MaintenanceError) in
                try store { () throws(StoreError) in try resetChangeLog(to, after: 0, gap: restoreSequenceGap) }
            }
            try checkIntegrity(to, path: temporary)
            to.close()
            try LocalFiles.syncFile(temporary)
            // A write-ahead log without its database would be replayed onto the new one.
            for orphan in [target + "-wal", target + "-shm"] {
                do throws(SystemError) { try Syscall.removeFile(orphan) } catch {
                    throw .io(operation: "remove", path: orphan, errno: error.errno)
                }
            }
            // link() never replaces: a database that appeared meanwhile is kept.
            do throws(SystemError) { try Syscall.link(temporary, to: target) } catch {
                throw error.errno == EEXIST ? .exists(path: target) : .io(operation: "link", path: target, errno: error.errno)
            }
            _ = try? Syscall.removeFile(temporary)
            try LocalFiles.syncFile(directory)
        } catch {
            _ = try? Syscall.removeFile(temporary)
            _ = try? Syscall.removeFile(temporary + "-journal")
            throw error
        }
    }

    /// Empties the change log and moves its sequence to `gap` past the highest of `after`
    /// and its own, in the caller's transaction: no event id issued before matches the new
    /// log, so streams resuming with one get a fresh snapshot. Returns the new sequence.
    @discardableResult
    static func resetChangeLog(_ connection: SQLiteConnection, after: Int64, gap: Int64) throws(StoreError) -> Int64 {
        let next = max(try ChangeLogReader(connection: connection).lastSeq(), after) + gap
        try connection.execute("DELETE FROM changes")
        try connection.statement("DELETE FROM sqlite_sequence WHERE name = 'changes'").run()
        try connection.statement("INSERT INTO sqlite_sequence(name, seq) VALUES ('changes', ?)").run([.integer(next)])
        return next
    }

    /// Runs `body` in one write transaction, rolled back if it throws.
    @discardableResult
    static func inTransaction<T>(_ connection: SQLiteConnection, _ body: () throws(MaintenanceError) -> T) throws(MaintenanceError) -> T {
        try store { () throws(StoreError) in try connection.execute("BEGIN IMMEDIATE") }
        do {
            let result = try body()
            try store { () throws(StoreError) in try connection.execute("COMMIT") }
            return result
        } catch {
            try? connection.execute("ROLLBACK")
            throw error
        }
    }

    // MARK: Files

    /// Creates `path` (mode 0600), failing with `exists` if anything is there.
    static func createNewFile(_ path: String) throws(MaintenanceError) {
        do throws(SystemError) {
            let fd = try Syscall.openFile(path, O_WRONLY | O_CREAT | O_EXCL, mode: fileMode)
            try? Syscall.close(fd)  // a new, empty file: nothing to lose if close reports an error
        } catch {
            throw error.errno == EEXIST ? .exists(path: path) : .io(operation: "create", path: path, errno: error.errno)
        }
    }

    /// Runs a store operation, its error as `MaintenanceError.store`.
    static func store<T>(_ body: () throws(StoreError) -> T) throws(MaintenanceError) -> T {
        do {
            return try body()
        } catch {
            throw .store(error)
        }
    }
}
