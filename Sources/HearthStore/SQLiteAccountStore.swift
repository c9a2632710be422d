import CSQLite

/// `AccountStore` on the tree store's database: writes on its single writer queue (each
/// in its own transaction), reads on a reader.
public struct SQLiteAccountStore: AccountStore {
    let store: SQLiteTreeStore

    static let columns = """
        uid, email, password_hash, display_name, photo_url, email_verified, disabled, provider,
        custom_claims, created_at, last_login_at, password_updated_at, valid_since
        """

    public func user(uid: String) throws -> UserRecord? {
        try store.onReader { try Self.fetchOne($0, "SELECT \(Self.columns) FROM users WHERE uid = ?", [.text(uid)]) }
    }

    public func user(email: String) throws -> UserRecord? {
        try store.onReader { try Self.fetchOne($0, "SELECT \(Self.columns) FROM users WHERE email = ?", [.text(email)]) }
    }

    public func users(after afterUID: String?, limit: Int) throws -> [UserRecord] {
        try store.onReader { connection in
            let stmt = try connection.statement("SELECT \(Self.columns) FROM users WHERE uid > ? ORDER BY uid LIMIT ?")
            try stmt.reset([.text(afterUID ?? ""), .integer(Int64(limit))])
            defer { try? stmt.reset() }
            var users: [UserRecord] = []
            while try stmt.step() { users.append(try Self.decode(stmt)) }
            return users
        }
    }

    public func insert(_ user: UserRecord) throws {
        try store.onWriter { connection in
            try Self.mapConstraint {
                try connection.statement("""
                    INSERT INTO users(\(Self.columns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """).run(Self.bindings(user))
            }
        }
    }

    public func update(_ user: UserRecord) throws {
        try store.onWriter { connection in
            try Self.mapConstraint {
                try connection.statement("""
                    UPDATE users SET uid = ?, email = ?, password_hash = ?, display_name = ?, photo_url = ?,
                      email_verified = ?, disabled = ?, provider = ?, custom_claims = ?, created_at = ?,
                      last_login_at = ?, password_updated_at = ?, valid_since = ? WHERE uid = ?
                    """).run(Self.bindings(user) + [.text(user.uid)])
            }
            guard connection.changes > 0 else { throw AccountStoreError.notFound }
        }
    }

    @discardableResult
    public func delete(uid: String) throws -> Bool {
        try store.onWriter { connection in
            try connection.execute("BEGIN IMMEDIATE")
            do {
                try connection.statement("DELETE FROM refresh_tokens WHERE uid = ?").run([.text(uid)])
                try connection.statement("DELETE FROM users WHERE uid = ?").run([.text(uid)])
                let deleted = connection.changes > 0
                try connection.execute("COMMIT")
                return deleted
            } catch {
                try? connection.execute("ROLLBACK")
                throw error
            }
        }
    }

    public func addRefreshToken(hash: String, uid: String, family: String, at time: Int64) throws {
        try store.onWriter { connection in
            try connection.statement("INSERT INTO refresh_tokens(hash, uid, family, created_at) VALUES (?, ?, ?, ?)")
                .run([.text(hash), .text(uid), .text(family), .integer(time)])
        }
    }

    public func rotateRefreshToken(hash: String, newHash: String, at time: Int64) throws -> RefreshOutcome {
        try store.onWriter { connection in
            try connection.execute("BEGIN IMMEDIATE")
            do {
                let outcome = try Self.rotate(connection, hash: hash, newHash: newHash, at: time)
                try connection.execute("COMMIT")
                return outcome
            } catch {
                try? connection.execute("ROLLBACK")
                throw error
            }
        }
    }

    private static func rotate(_ connection: SQLiteConnection, hash: String, newHash: String, at time: Int64) throws -> RefreshOutcome {
        let stmt = try connection.statement("""
            SELECT t.uid, t.family, t.used_at, t.revoked, u.disabled FROM refresh_tokens t
            JOIN users u ON u.uid = t.uid WHERE t.hash = ?
            """)
        try stmt.reset([.text(hash)])
        guard try stmt.step() else { try stmt.reset(); return .invalid }
        let uid = stmt.text(0), family = stmt.text(1)
        let used = stmt.columnType(2) != SQLITE_NULL
        let revoked = stmt.int64(3) != 0, disabled = stmt.int64(4) != 0
        try stmt.reset()
        if revoked || disabled { return .invalid }
        if used {
            try connection.statement("UPDATE refresh_tokens SET revoked = 1 WHERE family = ?").run([.text(family)])
            return .reused(uid: uid)
        }
        try connection.statement("UPDATE refresh_tokens SET used_at = ? WHERE hash = ?").run([.integer(time), .text(hash)])
        try connection.statement("INSERT INTO refresh_tokens(hash, uid, family, created_at) VALUES (?, ?, ?, ?)")
            .run([.text(newHash), .text(uid), .text(family), .integer(time)])
        return .rotated(uid: uid)
    }

    public func revokeRefreshTokens(uid: String) throws {
        try store.onWriter { connection in
            try connection.statement("UPDATE refresh_tokens SET revoked = 1 WHERE uid = ?").run([.text(uid)])
        }
    }

    // MARK: Rows

    static func bindings(_ u: UserRecord) -> [SQLiteValue] {
        func text(_ s: String?) -> SQLiteValue { s.map { .text($0) } ?? .null }
        func int(_ i: Int64?) -> SQLiteValue { i.map { .integer($0) } ?? .null }
        return [
            .text(u.uid), text(u.email), text(u.passwordHash), text(u.displayName), text(u.photoURL),
            .integer(u.emailVerified ? 1 : 0), .integer(u.disabled ? 1 : 0), .text(u.provider.rawValue),
            text(u.customClaims), .integer(u.createdAt), int(u.lastLoginAt), int(u.passwordUpdatedAt), .integer(u.validSince),
        ]
    }

    private static func fetchOne(_ connection: SQLiteConnection, _ sql: String, _ values: [SQLiteValue]) throws -> UserRecord? {
        let stmt = try connection.statement(sql)
        try stmt.reset(values)
        defer { try? stmt.reset() }
        return try stmt.step() ? try decode(stmt) : nil
    }

    private static func decode(_ s: SQLiteStatement) throws -> UserRecord {
        func text(_ i: Int32) -> String? { s.columnType(i) == SQLITE_NULL ? nil : s.text(i) }
        func int(_ i: Int32) -> Int64? { s.columnType(i) == SQLITE_NULL ? nil : s.int64(i) }
        guard let provider = UserRecord.Provider(rawValue: s.text(7)) else {
            throw StoreError.corrupt("user with unknown provider")
        }
        var user = UserRecord(uid: s.text(0), email: text(1), passwordHash: text(2), provider: provider,
                              createdAt: s.int64(9), validSince: s.int64(12))
        user.displayName = text(3)
        user.photoURL = text(4)
        user.emailVerified = s.int64(5) != 0
        user.disabled = s.int64(6) != 0
        user.customClaims = text(8)
        user.lastLoginAt = int(10)
        user.passwordUpdatedAt = int(11)
        return user
    }

    /// SQLITE_CONSTRAINT_PRIMARYKEY and _UNIQUE as typed account errors.
    private static func mapConstraint(_ body: () throws -> Void) throws {
        do {
            try body()
        } catch StoreError.sqlite(let code, let message, _) where code == 1555 || code == 2067 {
            throw message.contains("email") ? AccountStoreError.duplicateEmail : AccountStoreError.duplicateUID
        }
    }
}

extension SQLiteTreeStore {
    /// The accounts kept in this store's database.
    public var accounts: SQLiteAccountStore { SQLiteAccountStore(store: self) }
}

extension SQLiteConnection {
    var changes: Int64 { Int64(sqlite3_changes(handle)) }
}
