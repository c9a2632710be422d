import CSQLite
import HearthStore

/// `AccountStore` on the tree store's database: writes on its single writer queue (each
/// in its own transaction), reads on a reader.
public struct SQLiteAccountStore: AccountStore {
    let store: SQLiteTreeStore

    static let columns = UserRecord.columns

    public func user(uid: String) throws -> UserRecord? {
        try store.onReader { try Self.fetchOne($0, "SELECT \(Self.columns) FROM users WHERE uid = ?", [.text(uid)]) }
    }

    public func user(email: String) throws -> UserRecord? {
        try store.onReader { try Self.fetchOne($0, "SELECT \(Self.columns) FROM users WHERE email = ?", [.text(email)]) }
    }

    public func user(providerID: String, rawID: String) throws -> UserRecord? {
        try store.onReader {
            try Self.fetchOne($0, "SELECT \(Self.prefixedColumns) FROM users u JOIN provider_links l ON l.uid = u.uid WHERE l.provider_id = ? AND l.raw_id = ?",
                              [.text(providerID), .text(rawID)])
        }
    }

    public func users(after afterUID: String?, limit: Int) throws -> [UserRecord] {
        try store.onReader { connection in
            let stmt = try connection.statement("SELECT \(Self.columns) FROM users WHERE uid > ? ORDER BY uid LIMIT ?")
            try stmt.reset([.text(afterUID ?? ""), .integer(Int64(limit))])
            defer { try? stmt.reset() }
            var users: [UserRecord] = []
            while try stmt.step() { users.append(try Self.decode(stmt)) }
            try stmt.reset()
            return try Self.attachLinks(connection, to: users)
        }
    }

    public func insert(_ user: UserRecord) throws {
        try store.onWriter { connection in
            try Self.inTransaction(connection) {
                try Self.mapConstraint {
                    try connection.statement("""
                        INSERT INTO users(\(Self.columns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                        """).run(Self.bindings(user))
                    try Self.writeLinks(connection, of: user, replacing: false)
                }
            }
        }
    }

    public func update(_ user: UserRecord) throws {
        try store.onWriter { connection in
            try Self.inTransaction(connection) {
                try Self.mapConstraint {
                    try connection.statement("""
                        UPDATE users SET uid = ?, email = ?, password_hash = ?, display_name = ?, photo_url = ?,
                          email_verified = ?, disabled = ?, provider = ?, custom_claims = ?, created_at = ?,
                          last_login_at = ?, password_updated_at = ?, valid_since = ? WHERE uid = ?
                        """).run(Self.bindings(user) + [.text(user.uid)])
                    guard connection.changes > 0 else { throw AccountStoreError.notFound }
                    try Self.writeLinks(connection, of: user, replacing: true)
                }
            }
        }
    }

    @discardableResult
    public func delete(uid: String) throws -> Bool {
        try store.onWriter { connection in
            try connection.execute("BEGIN IMMEDIATE")
            do {
                try connection.statement("DELETE FROM refresh_tokens WHERE uid = ?").run([.text(uid)])
                try connection.statement("DELETE FROM oob_codes WHERE uid = ?").run([.text(uid)])
                try connection.statement("DELETE FROM provider_links WHERE uid = ?").run([.text(uid)])
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

    public func addRefreshToken(hash: String, uid: String, family: String, signIn: SignInRecord) throws {
        try store.onWriter { connection in
            try connection.statement("INSERT INTO refresh_tokens(hash, uid, family, created_at, signed_in_at, provider, claims) VALUES (?, ?, ?, ?, ?, ?, ?)")
                .run([.text(hash), .text(uid), .text(family), .integer(signIn.at), .integer(signIn.at),
                      signIn.provider.map { .text($0) } ?? .null, signIn.claims.map { .text($0) } ?? .null])
        }
    }

    public func rotateRefreshToken(_ rotation: RefreshRotation) throws -> RefreshOutcome {
        try store.onWriter { connection in
            try connection.execute("BEGIN IMMEDIATE")
            do {
                let outcome = try Self.rotate(connection, rotation)
                try connection.execute("COMMIT")
                return outcome
            } catch {
                try? connection.execute("ROLLBACK")
                throw error
            }
        }
    }

    private static func rotate(_ connection: SQLiteConnection, _ rotation: RefreshRotation) throws -> RefreshOutcome {
        let stmt = try connection.statement("""
            SELECT t.uid, t.family, t.used_at, t.revoked, u.disabled,
                   COALESCE(t.signed_in_at, (SELECT MIN(f.created_at) FROM refresh_tokens f WHERE f.family = t.family)),
                   t.successor_hash, t.successor_sealed, t.provider, t.claims
            FROM refresh_tokens t JOIN users u ON u.uid = t.uid WHERE t.hash = ?
            """)
        try stmt.reset([.text(rotation.hash)])
        guard try stmt.step() else { try stmt.reset(); return .invalid }
        func text(_ column: Int32) -> String? { stmt.columnType(column) == SQLITE_NULL ? nil : stmt.text(column) }
        let token = PresentedRefreshToken(
            uid: stmt.text(0), family: stmt.text(1), usedAt: stmt.columnType(2) == SQLITE_NULL ? nil : stmt.int64(2),
            revoked: stmt.int64(3) != 0, userDisabled: stmt.int64(4) != 0,
            signIn: SignInRecord(at: stmt.int64(5), provider: text(8), claims: text(9)),
            successorHash: text(6), successorSealed: text(7))
        try stmt.reset()
        var successorUnused = false
        if let successor = token.successorToCheck(for: rotation) {
            let next = try connection.statement("SELECT used_at IS NULL AND revoked = 0 FROM refresh_tokens WHERE hash = ? AND family = ?")
            try next.reset([.text(successor), .text(token.family)])
            successorUnused = try next.step() && next.int64(0) != 0
            try next.reset()
        }
        let decision = token.decide(rotation, successorUnused: successorUnused)
        switch decision {
        case .invalid, .retry:
            break
        case .revokeFamily:
            try connection.statement("UPDATE refresh_tokens SET revoked = 1 WHERE family = ?").run([.text(token.family)])
        case .rotate:
            try connection.statement("UPDATE refresh_tokens SET used_at = ?, successor_hash = ?, successor_sealed = ? WHERE hash = ?")
                .run([.integer(rotation.at), .text(rotation.newHash), .text(rotation.sealedNew), .text(rotation.hash)])
            try connection.statement("INSERT INTO refresh_tokens(hash, uid, family, created_at, signed_in_at, provider, claims) VALUES (?, ?, ?, ?, ?, ?, ?)")
                .run([.text(rotation.newHash), .text(token.uid), .text(token.family), .integer(rotation.at), .integer(token.signIn.at),
                      token.signIn.provider.map { .text($0) } ?? .null, token.signIn.claims.map { .text($0) } ?? .null])
        }
        return token.outcome(of: decision)
    }

    public func importUsers(_ next: () throws -> UserRecord?) throws -> Int {
        try store.importUsers(next)
    }

    public func addActionCode(_ code: ActionCode) throws {
        try store.onWriter { connection in
            try connection.statement("INSERT INTO oob_codes(hash, uid, kind, email, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)")
                .run([.text(code.hash), .text(code.uid), .text(code.kind), .text(code.email), .integer(code.createdAt), .integer(code.expiresAt)])
        }
    }

    public func actionCode(hash: String, kind: String, at time: Int64, consume: Bool) throws -> ActionCodeLookup {
        try store.onWriter { connection in
            try connection.execute("BEGIN IMMEDIATE")
            do {
                let stmt = try connection.statement("SELECT uid, email, created_at, expires_at, used_at FROM oob_codes WHERE hash = ? AND kind = ?")
                try stmt.reset([.text(hash), .text(kind)])
                guard try stmt.step() else {
                    try stmt.reset()
                    try connection.execute("COMMIT")
                    return .invalid
                }
                let code = ActionCode(hash: hash, uid: stmt.text(0), kind: kind, email: stmt.text(1), createdAt: stmt.int64(2), expiresAt: stmt.int64(3))
                let used = stmt.columnType(4) != SQLITE_NULL
                try stmt.reset()
                let outcome: ActionCodeLookup = used ? .invalid : (time >= code.expiresAt ? .expired : .valid(code))
                if consume, case .valid = outcome {
                    try connection.statement("UPDATE oob_codes SET used_at = ? WHERE hash = ?").run([.integer(time), .text(hash)])
                }
                try connection.execute("COMMIT")
                return outcome
            } catch {
                try? connection.execute("ROLLBACK")
                throw error
            }
        }
    }

    public func refreshTokens(after afterHash: String?, limit: Int) throws -> [RefreshTokenRow] {
        try store.onReader { connection in
            let stmt = try connection.statement("SELECT \(RefreshTokenRow.columns) FROM refresh_tokens WHERE hash > ? ORDER BY hash LIMIT ?")
            try stmt.reset([.text(afterHash ?? ""), .integer(Int64(limit))])
            defer { try? stmt.reset() }
            var rows: [RefreshTokenRow] = []
            while try stmt.step() {
                func text(_ i: Int32) -> String? { stmt.columnType(i) == SQLITE_NULL ? nil : stmt.text(i) }
                func int(_ i: Int32) -> Int64? { stmt.columnType(i) == SQLITE_NULL ? nil : stmt.int64(i) }
                rows.append(RefreshTokenRow(hash: stmt.text(0), uid: stmt.text(1), family: stmt.text(2), createdAt: stmt.int64(3), usedAt: int(4),
                                            revoked: stmt.int64(5) != 0, signedInAt: int(6), successorHash: text(7), successorSealed: text(8),
                                            provider: text(9), claims: text(10)))
            }
            return rows
        }
    }

    public func insertRefreshTokens(_ rows: [RefreshTokenRow]) throws {
        try store.onWriter { connection in
            try connection.execute("BEGIN IMMEDIATE")
            do {
                let insert = try connection.statement("INSERT INTO refresh_tokens(\(RefreshTokenRow.columns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
                for row in rows {
                    func text(_ s: String?) -> SQLiteValue { s.map { .text($0) } ?? .null }
                    func int(_ i: Int64?) -> SQLiteValue { i.map { .integer($0) } ?? .null }
                    try insert.run([.text(row.hash), .text(row.uid), .text(row.family), .integer(row.createdAt), int(row.usedAt),
                                    .integer(row.revoked ? 1 : 0), int(row.signedInAt), text(row.successorHash), text(row.successorSealed),
                                    text(row.provider), text(row.claims)])
                }
                try connection.execute("COMMIT")
            } catch {
                try? connection.execute("ROLLBACK")
                throw error
            }
        }
    }

    public func revokeRefreshTokens(uid: String) throws {
        try store.onWriter { connection in
            try connection.statement("UPDATE refresh_tokens SET revoked = 1 WHERE uid = ?").run([.text(uid)])
        }
    }

    // MARK: Rows

    static func bindings(_ u: UserRecord) -> [SQLiteValue] {
        u.columnValues.map(SQLiteValue.init)
    }

    private static func fetchOne(_ connection: SQLiteConnection, _ sql: String, _ values: [SQLiteValue]) throws -> UserRecord? {
        let stmt = try connection.statement(sql)
        try stmt.reset(values)
        let user = try stmt.step() ? try decode(stmt) : nil
        try stmt.reset()
        return try user.map { try attachLinks(connection, to: [$0])[0] }
    }

    private static func decode(_ s: SQLiteStatement) throws -> UserRecord {
        try UserRecord(columnText: { s.columnType(Int32($0)) == SQLITE_NULL ? nil : s.text(Int32($0)) },
                       int: { s.columnType(Int32($0)) == SQLITE_NULL ? nil : s.int64(Int32($0)) })
    }

    /// SQLITE_CONSTRAINT_PRIMARYKEY and _UNIQUE as typed account errors.
    static func mapConstraint(_ body: () throws -> Void) throws {
        do {
            try body()
        } catch StoreError.engine(let failure) where failure.code == "1555" || failure.code == "2067" {
            if failure.message.contains("provider_links") { throw AccountStoreError.duplicateProviderLink }
            throw failure.message.contains("email") ? AccountStoreError.duplicateEmail : AccountStoreError.duplicateUID
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
