/// The database schema, versioned with `PRAGMA user_version` and migrated forward only.
///
/// Each migration runs once, in its own transaction, in order. Never edit a shipped
/// migration: append a new one.
enum Schema {
    static let migrations: [String] = [
        // 1: the tree (one row per leaf, DESIGN.md §4) and the change log.
        """
        CREATE TABLE nodes (
            path  TEXT PRIMARY KEY NOT NULL,   -- segments joined by '/', '' is the root
            kind  INTEGER NOT NULL,            -- LeafKind raw value
            value ANY
        ) STRICT;
        CREATE TABLE changes (
            seq  INTEGER PRIMARY KEY AUTOINCREMENT,
            path TEXT NOT NULL,
            kind TEXT NOT NULL,                -- 'put' or 'patch'
            data TEXT NOT NULL,                -- JSON of the change, as streams send it
            at   INTEGER NOT NULL              -- ms since the epoch
        ) STRICT;
        """,
    ]

    static var currentVersion: Int { migrations.count }

    /// Brings the database at `connection` to `currentVersion`.
    static func migrate(_ connection: SQLiteConnection) throws(StoreError) {
        let found = Int(try connection.scalarInt("PRAGMA user_version") ?? 0)
        guard found <= currentVersion else {
            throw .schemaTooNew(found: found, known: currentVersion)
        }
        for version in found..<currentVersion {
            try connection.execute("BEGIN IMMEDIATE")
            do {
                try connection.execute(migrations[version])
                try connection.execute("PRAGMA user_version = \(version + 1)")
                try connection.execute("COMMIT")
            } catch {
                try? connection.execute("ROLLBACK")
                throw error
            }
        }
    }
}
