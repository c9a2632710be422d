import HearthStore

extension SQLiteTreeStore {
    /// Inserts users in one transaction on the writer: all of them or, on any error
    /// (including one thrown by `next`), none. `next` is called on the writer queue for
    /// each user until it returns nil, so a large file is read while it is inserted.
    /// Returns how many were inserted.
    public func importUsers(_ next: () throws -> UserRecord?) throws -> Int {
        try onWriter { connection in
            try connection.execute("BEGIN IMMEDIATE")
            do {
                let insert = try connection.statement("""
                    INSERT INTO users(uid, email, password_hash, display_name, photo_url, email_verified, disabled, provider,
                      custom_claims, created_at, last_login_at, password_updated_at, valid_since)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """)
                var count = 0
                while let user = try next() {
                    do {
                        try insert.run(SQLiteAccountStore.bindings(user))
                    } catch let error as StoreError where error.sqliteCode == 1555 {
                        throw AccountImportError.duplicateUID(user.uid)
                    } catch let error as StoreError where error.sqliteCode == 2067 {
                        throw AccountImportError.duplicateEmail(uid: user.uid)
                    }
                    do {
                        try SQLiteAccountStore.writeLinks(connection, of: user, replacing: false)
                    } catch let error as StoreError where error.sqliteCode == 1555 || error.sqliteCode == 2067 {
                        throw AccountImportError.duplicateProviderLink(uid: user.uid)
                    }
                    count += 1
                }
                try connection.execute("COMMIT")
                return count
            } catch {
                try? connection.execute("ROLLBACK")
                throw error
            }
        }
    }

}
