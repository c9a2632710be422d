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
        // 2: accounts (DESIGN.md §6): users, and refresh tokens stored only as hashes.
        """
        CREATE TABLE users (
            uid                 TEXT PRIMARY KEY NOT NULL,
            email               TEXT UNIQUE,            -- lower-cased
            password_hash       TEXT,                   -- PHC string (ours) or firebase-scrypt import
            display_name        TEXT,
            photo_url           TEXT,
            email_verified      INTEGER NOT NULL DEFAULT 0,
            disabled            INTEGER NOT NULL DEFAULT 0,
            provider            TEXT NOT NULL,          -- 'anonymous' or 'password'
            custom_claims       TEXT,                   -- JSON object text
            created_at          INTEGER NOT NULL,       -- ms
            last_login_at       INTEGER,                -- ms
            password_updated_at INTEGER,                -- ms
            valid_since         INTEGER NOT NULL        -- s: ID tokens issued before are refused
        ) STRICT;
        CREATE TABLE refresh_tokens (
            hash       TEXT PRIMARY KEY NOT NULL,       -- SHA-256 of the token; the token is never stored
            uid        TEXT NOT NULL REFERENCES users(uid) ON DELETE CASCADE,
            family     TEXT NOT NULL,                   -- every rotation of one sign-in shares it
            created_at INTEGER NOT NULL,                -- ms
            used_at    INTEGER,                         -- ms; set when rotated (then it may not be used again)
            revoked    INTEGER NOT NULL DEFAULT 0
        ) STRICT;
        CREATE INDEX refresh_tokens_family ON refresh_tokens(family);
        CREATE INDEX refresh_tokens_uid ON refresh_tokens(uid);
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
