import CSQLite
import HearthStore

/// The admin console's administrators and sessions, in the tree store's
/// database. Writes on its single writer, reads on a reader; calls block.
public struct SQLiteConsoleRecords: ConsoleRecords {
    let store: SQLiteTreeStore

    public typealias Admin = ConsoleStore.Admin
    public typealias SessionRecord = ConsoleStore.SessionRecord
    public typealias Failure = ConsoleStore.Failure
    public typealias RulesVersion = ConsoleStore.RulesVersion

    public func admin(email: String) throws -> Admin? {
        try store.onReader { connection in
            let stmt = try connection.statement("SELECT email, password_hash, created_at, password_at FROM console_admins WHERE email = ?")
            try stmt.reset([.text(email)])
            defer { try? stmt.reset() }
            guard try stmt.step() else { return nil }
            return Admin(email: stmt.text(0), passwordHash: stmt.text(1), createdAt: stmt.int64(2), passwordAt: stmt.int64(3))
        }
    }

    public func admins() throws -> [Admin] {
        try store.onReader { connection in
            let stmt = try connection.statement("SELECT email, password_hash, created_at, password_at FROM console_admins ORDER BY email")
            try stmt.reset()
            defer { try? stmt.reset() }
            var all: [Admin] = []
            while try stmt.step() {
                all.append(Admin(email: stmt.text(0), passwordHash: stmt.text(1), createdAt: stmt.int64(2), passwordAt: stmt.int64(3)))
            }
            return all
        }
    }

    public func insert(_ admin: Admin) throws {
        try store.onWriter { connection in
            do {
                try connection.statement("INSERT INTO console_admins(email, password_hash, created_at, password_at) VALUES (?, ?, ?, ?)")
                    .run([.text(admin.email), .text(admin.passwordHash), .integer(admin.createdAt), .integer(admin.passwordAt)])
            } catch let error as StoreError where error.sqliteCode == 1555 || error.sqliteCode == 2067 {
                throw Failure.exists
            }
        }
    }

    /// Sets the password and ends the admin's sessions.
    public func setPassword(email: String, hash: String, at time: Int64) throws {
        try store.onWriter { connection in
            try connection.execute("BEGIN IMMEDIATE")
            do {
                try connection.statement("UPDATE console_admins SET password_hash = ?, password_at = ? WHERE email = ?")
                    .run([.text(hash), .integer(time), .text(email)])
                guard connection.changes > 0 else { throw Failure.notFound }
                try connection.statement("DELETE FROM console_sessions WHERE email = ?").run([.text(email)])
                try connection.execute("COMMIT")
            } catch {
                try? connection.execute("ROLLBACK")
                throw error
            }
        }
    }

    /// Removes the admin and ends their sessions.
    public func remove(email: String) throws {
        try store.onWriter { connection in
            try connection.execute("BEGIN IMMEDIATE")
            do {
                try connection.statement("DELETE FROM console_sessions WHERE email = ?").run([.text(email)])
                try connection.statement("DELETE FROM console_admins WHERE email = ?").run([.text(email)])
                guard connection.changes > 0 else { throw Failure.notFound }
                try connection.execute("COMMIT")
            } catch {
                try? connection.execute("ROLLBACK")
                throw error
            }
        }
    }

    public func addSession(_ session: SessionRecord) throws {
        try store.onWriter { connection in
            try connection.statement("INSERT INTO console_sessions(hash, email, csrf, created_at, seen_at) VALUES (?, ?, ?, ?, ?)")
                .run([.text(session.hash), .text(session.email), .text(session.csrf), .integer(session.createdAt), .integer(session.seenAt)])
        }
    }

    public func session(hash: String) throws -> SessionRecord? {
        try store.onReader { connection in
            let stmt = try connection.statement("SELECT email, csrf, created_at, seen_at FROM console_sessions WHERE hash = ?")
            try stmt.reset([.text(hash)])
            defer { try? stmt.reset() }
            guard try stmt.step() else { return nil }
            return SessionRecord(hash: hash, email: stmt.text(0), csrf: stmt.text(1), createdAt: stmt.int64(2), seenAt: stmt.int64(3))
        }
    }

    public func touchSession(hash: String, at time: Int64) throws {
        try store.onWriter { connection in
            try connection.statement("UPDATE console_sessions SET seen_at = ? WHERE hash = ?").run([.integer(time), .text(hash)])
        }
    }

    public func endSession(hash: String) throws {
        try store.onWriter { connection in
            try connection.statement("DELETE FROM console_sessions WHERE hash = ?").run([.text(hash)])
        }
    }

    /// Removes sessions last seen at or before `idleBefore` or created at or before `createdBefore`.
    public func pruneSessions(idleBefore: Int64, createdBefore: Int64) throws {
        try store.onWriter { connection in
            try connection.statement("DELETE FROM console_sessions WHERE seen_at <= ? OR created_at <= ?")
                .run([.integer(idleBefore), .integer(createdBefore)])
        }
    }
}

extension SQLiteConsoleRecords {
    /// Records a saved rules file; keeps the newest `keep`.
    public func recordRules(_ text: String, by email: String, at time: Int64, keep: Int) throws {
        try store.onWriter { connection in
            try connection.execute("BEGIN IMMEDIATE")
            do {
                try connection.statement("INSERT INTO rules_history(saved_at, saved_by, text) VALUES (?, ?, ?)")
                    .run([.integer(time), .text(email), .text(text)])
                try connection.statement("DELETE FROM rules_history WHERE id NOT IN (SELECT id FROM rules_history ORDER BY id DESC LIMIT ?)")
                    .run([.integer(Int64(keep))])
                try connection.execute("COMMIT")
            } catch {
                try? connection.execute("ROLLBACK")
                throw error
            }
        }
    }

    /// The recorded versions, newest first.
    public func rulesHistory() throws -> [RulesVersion] {
        try store.onReader { connection in
            let stmt = try connection.statement("SELECT id, saved_at, saved_by, text FROM rules_history ORDER BY id DESC")
            try stmt.reset()
            defer { try? stmt.reset() }
            var all: [RulesVersion] = []
            while try stmt.step() { all.append(RulesVersion(id: stmt.int64(0), savedAt: stmt.int64(1), savedBy: stmt.text(2), text: stmt.text(3))) }
            return all
        }
    }
}

extension SQLiteTreeStore {
    /// The admin console's administrators and sessions.
    public var console: SQLiteConsoleRecords { SQLiteConsoleRecords(store: self) }
}
