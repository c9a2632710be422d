import HearthStore

/// `AccountStore` in the shared PostgreSQL database: every node sees a change
/// to a user or a refresh token as soon as it is acknowledged (nothing is cached). A
/// refresh token's use locks its row (`FOR UPDATE`), so two nodes given the same token
/// at once rotate it once: the second sees it used.
public struct PostgresAccountStore: AccountStore {
    let engine: PostgresEngine

    static let columns = UserRecord.columns

    public func user(uid: String) throws -> UserRecord? {
        try engine.withAux { try Self.fetchOne($0, "SELECT \(Self.columnsWithLinks) FROM users u WHERE u.uid = $1", [.text(uid)]) }
    }

    public func user(email: String) throws -> UserRecord? {
        try engine.withAux { try Self.fetchOne($0, "SELECT \(Self.columnsWithLinks) FROM users u WHERE u.email = $1", [.text(email)]) }
    }

    public func user(providerID: String, rawID: String) throws -> UserRecord? {
        try engine.withAux {
            try Self.fetchOne($0, "SELECT \(Self.columnsWithLinks) FROM users u JOIN provider_links p ON p.uid = u.uid WHERE p.provider_id = $1 AND p.raw_id = $2",
                              [.text(providerID), .text(rawID)])
        }
    }

    public func users(after afterUID: String?, limit: Int) throws -> [UserRecord] {
        try engine.withAux { connection in
            let result = try connection.query("SELECT \(Self.columns) FROM users WHERE uid > $1 ORDER BY uid COLLATE \"C\" LIMIT $2",
                                              [.text(afterUID ?? ""), .int(Int64(limit))])
            return try Self.attachLinks(connection, to: try (0..<result.rowCount).map { row in try Self.decode(result, row) })
        }
    }

    public func insert(_ user: UserRecord) throws {
        try engine.inTransaction { connection in
            try Self.mapConstraint {
                _ = try connection.query("INSERT INTO users(\(Self.columns)) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)",
                                         Self.bindings(user))
                try Self.writeLinks(connection, of: user, replacing: false)
            }
        }
    }

    public func update(_ user: UserRecord) throws {
        try engine.inTransaction { connection in
            var changed = 0
            try Self.mapConstraint {
                changed = try connection.query("""
                    UPDATE users SET uid = $1, email = $2, password_hash = $3, display_name = $4, photo_url = $5,
                      email_verified = $6, disabled = $7, provider = $8, custom_claims = $9, created_at = $10,
                      last_login_at = $11, password_updated_at = $12, valid_since = $13 WHERE uid = $14
                    """, Self.bindings(user) + [.text(user.uid)]).affectedRows
                guard changed > 0 else { throw AccountStoreError.notFound }
                try Self.writeLinks(connection, of: user, replacing: true)
            }
        }
    }

    @discardableResult
    public func delete(uid: String) throws -> Bool {
        try engine.inTransaction { connection in
            _ = try connection.query("DELETE FROM refresh_tokens WHERE uid = $1", [.text(uid)])
            _ = try connection.query("DELETE FROM oob_codes WHERE uid = $1", [.text(uid)])
            _ = try connection.query("DELETE FROM provider_links WHERE uid = $1", [.text(uid)])
            return try connection.query("DELETE FROM users WHERE uid = $1", [.text(uid)]).affectedRows > 0
        }
    }

    public func addRefreshToken(hash: String, uid: String, family: String, signIn: SignInRecord) throws {
        try engine.withAux { connection in
            _ = try connection.query(
                "INSERT INTO refresh_tokens(hash, uid, family, created_at, signed_in_at, provider, claims) VALUES ($1, $2, $3, $4, $5, $6, $7)",
                [.text(hash), .text(uid), .text(family), .int(signIn.at), .int(signIn.at),
                 signIn.provider.map { .text($0) } ?? .null, signIn.claims.map { .text($0) } ?? .null])
        }
    }

    public func rotateRefreshToken(_ rotation: RefreshRotation) throws -> RefreshOutcome {
        try engine.inTransaction { connection in try Self.rotate(connection, rotation) }
    }

    private static func rotate(_ connection: PGConnection, _ rotation: RefreshRotation) throws -> RefreshOutcome {
        let row = try connection.query("""
            SELECT t.uid, t.family, t.used_at, t.revoked, u.disabled,
                   COALESCE(t.signed_in_at, (SELECT MIN(f.created_at) FROM refresh_tokens f WHERE f.family = t.family)),
                   t.successor_hash, t.successor_sealed, t.provider, t.claims
            FROM refresh_tokens t JOIN users u ON u.uid = t.uid WHERE t.hash = $1 FOR UPDATE OF t
            """, [.text(rotation.hash)])
        guard row.rowCount > 0 else { return .invalid }
        func text(_ column: Int) -> String? { row.isNull(0, column) ? nil : row.text(0, column) }
        let token = PresentedRefreshToken(
            uid: row.text(0, 0), family: row.text(0, 1), usedAt: row.isNull(0, 2) ? nil : row.int64(0, 2),
            revoked: row.int64(0, 3) != 0, userDisabled: row.int64(0, 4) != 0,
            signIn: SignInRecord(at: row.int64(0, 5), provider: text(8), claims: text(9)),
            successorHash: text(6), successorSealed: text(7))
        var successorUnused = false
        if let successor = token.successorToCheck(for: rotation) {
            let next = try connection.query("SELECT used_at IS NULL AND revoked = 0 FROM refresh_tokens WHERE hash = $1 AND family = $2",
                                            [.text(successor), .text(token.family)])
            successorUnused = next.rowCount > 0 && next.bool(0, 0)
        }
        let decision = token.decide(rotation, successorUnused: successorUnused)
        switch decision {
        case .invalid, .retry:
            break
        case .revokeFamily:
            _ = try connection.query("UPDATE refresh_tokens SET revoked = 1 WHERE family = $1", [.text(token.family)])
        case .rotate:
            _ = try connection.query("UPDATE refresh_tokens SET used_at = $1, successor_hash = $2, successor_sealed = $3 WHERE hash = $4",
                                     [.int(rotation.at), .text(rotation.newHash), .text(rotation.sealedNew), .text(rotation.hash)])
            _ = try connection.query(
                "INSERT INTO refresh_tokens(hash, uid, family, created_at, signed_in_at, provider, claims) VALUES ($1, $2, $3, $4, $5, $6, $7)",
                [.text(rotation.newHash), .text(token.uid), .text(token.family), .int(rotation.at), .int(token.signIn.at),
                 token.signIn.provider.map { .text($0) } ?? .null, token.signIn.claims.map { .text($0) } ?? .null])
        }
        return token.outcome(of: decision)
    }

    public func refreshTokens(after afterHash: String?, limit: Int) throws -> [RefreshTokenRow] {
        try engine.withAux { connection in
            let r = try connection.query("SELECT \(RefreshTokenRow.columns) FROM refresh_tokens WHERE hash > $1 ORDER BY hash COLLATE \"C\" LIMIT $2",
                                         [.text(afterHash ?? ""), .int(Int64(limit))])
            return (0..<r.rowCount).map { row in
                func text(_ c: Int) -> String? { r.isNull(row, c) ? nil : r.text(row, c) }
                func int(_ c: Int) -> Int64? { r.isNull(row, c) ? nil : r.int64(row, c) }
                return RefreshTokenRow(hash: r.text(row, 0), uid: r.text(row, 1), family: r.text(row, 2), createdAt: r.int64(row, 3), usedAt: int(4),
                                       revoked: r.int64(row, 5) != 0, signedInAt: int(6), successorHash: text(7), successorSealed: text(8),
                                       provider: text(9), claims: text(10))
            }
        }
    }

    public func insertRefreshTokens(_ rows: [RefreshTokenRow]) throws {
        try engine.inTransaction { connection in
            for row in rows {
                func text(_ s: String?) -> PGValue { s.map { .text($0) } ?? .null }
                func int(_ i: Int64?) -> PGValue { i.map { .int($0) } ?? .null }
                _ = try connection.query("INSERT INTO refresh_tokens(\(RefreshTokenRow.columns)) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
                                         [.text(row.hash), .text(row.uid), .text(row.family), .int(row.createdAt), int(row.usedAt),
                                          .int(row.revoked ? 1 : 0), int(row.signedInAt), text(row.successorHash), text(row.successorSealed),
                                          text(row.provider), text(row.claims)])
            }
        }
    }

    public func revokeRefreshTokens(uid: String) throws {
        try engine.withAux { connection in
            _ = try connection.query("UPDATE refresh_tokens SET revoked = 1 WHERE uid = $1", [.text(uid)])
        }
    }

    public func importUsers(_ next: () throws -> UserRecord?) throws -> Int {
        try engine.inTransaction { connection in
            var count = 0
            while let user = try next() {
                do {
                    try Self.mapConstraint {
                        _ = try connection.query("INSERT INTO users(\(Self.columns)) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)",
                                                 Self.bindings(user))
                        try Self.writeLinks(connection, of: user, replacing: false)
                    }
                } catch AccountStoreError.duplicateProviderLink {
                    throw AccountImportError.duplicateProviderLink(uid: user.uid)
                } catch AccountStoreError.duplicateUID {
                    throw AccountImportError.duplicateUID(user.uid)
                } catch AccountStoreError.duplicateEmail {
                    throw AccountImportError.duplicateEmail(uid: user.uid)
                }
                count += 1
            }
            return count
        }
    }

    public func addActionCode(_ code: ActionCode) throws {
        try engine.withAux { connection in
            _ = try connection.query("INSERT INTO oob_codes(hash, uid, kind, email, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6)",
                                     [.text(code.hash), .text(code.uid), .text(code.kind), .text(code.email), .int(code.createdAt), .int(code.expiresAt)])
        }
    }

    public func actionCode(hash: String, kind: String, at time: Int64, consume: Bool) throws -> ActionCodeLookup {
        try engine.inTransaction { connection in
            let row = try connection.query("SELECT uid, email, created_at, expires_at, used_at FROM oob_codes WHERE hash = $1 AND kind = $2 FOR UPDATE",
                                           [.text(hash), .text(kind)])
            guard row.rowCount > 0 else { return .invalid }
            let code = ActionCode(hash: hash, uid: row.text(0, 0), kind: kind, email: row.text(0, 1), createdAt: row.int64(0, 2), expiresAt: row.int64(0, 3))
            let outcome: ActionCodeLookup = !row.isNull(0, 4) ? .invalid : (time >= code.expiresAt ? .expired : .valid(code))
            if consume, case .valid = outcome {
                _ = try connection.query("UPDATE oob_codes SET used_at = $1 WHERE hash = $2", [.int(time), .text(hash)])
            }
            return outcome
        }
    }

    // MARK: Rows

    static func bindings(_ u: UserRecord) -> [PGValue] {
        u.columnValues.map(PGValue.init)
    }

    /// One user and its links in one round trip (a token check reads the user on every
    /// request on a shared store): the query selects `columnsWithLinks`.
    private static func fetchOne(_ connection: PGConnection, _ sql: String, _ values: [PGValue]) throws -> UserRecord? {
        let result = try connection.query(sql, values)
        guard result.rowCount > 0 else { return nil }
        var user = try decode(result, 0)
        if !result.isNull(0, linksColumn) { user.providerLinks = try links(json: result.text(0, linksColumn)) }
        return user
    }

    static func decode(_ r: PGResult, _ row: Int) throws -> UserRecord {
        try UserRecord(columnText: { r.isNull(row, $0) ? nil : r.text(row, $0) },
                       int: { r.isNull(row, $0) ? nil : r.int64(row, $0) })
    }

    /// Unique violations as typed account errors: on `email`, or on the primary key.
    private static func mapConstraint(_ body: () throws -> Void) throws {
        do {
            try body()
        } catch StoreError.engine(let failure) where failure.kind == .constraint && failure.code == "23505" {
            if failure.message.contains("provider_links") { throw AccountStoreError.duplicateProviderLink }
            throw failure.message.contains("email") ? AccountStoreError.duplicateEmail : AccountStoreError.duplicateUID
        }
    }
}
