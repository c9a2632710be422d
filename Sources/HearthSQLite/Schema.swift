import CSQLite
import HearthStore

/// The database schema, versioned with `PRAGMA user_version` and migrated forward only.
///
/// Each migration runs once, in its own transaction, in order. Never edit a shipped
/// migration: append a new one.
enum Schema {
    static let migrations: [String] = [
        // 1: the tree (one row per leaf, docs/design.md §4) and the change log.
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
        // 2: accounts (docs/design.md §6): users, and refresh tokens stored only as hashes.
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
        // 3: query indexes (docs/protocol/rest.md §1.3 `.indexOn`): per indexed location
        // and order, one row per child with its ordered value, kept by the writer in the
        // same transactions as the data.
        """
        CREATE TABLE query_index (
            location  TEXT NOT NULL,     -- storage key of the node whose children are indexed
            spec      TEXT NOT NULL,     -- the child path ordered by, or '.value'
            rank      INTEGER NOT NULL,  -- QueryOrder.rank: 0 null/missing .. 5 object
            value     ANY NOT NULL,      -- the number or string; 0 for ranks without one
            key_order TEXT NOT NULL,     -- the child key in a form whose byte order is Firebase key order
            child_key TEXT NOT NULL,
            PRIMARY KEY (location, spec, child_key)
        ) STRICT, WITHOUT ROWID;
        CREATE INDEX query_index_order ON query_index(location, spec, rank, value, key_order);
        CREATE TABLE query_index_built (
            location TEXT NOT NULL,
            spec     TEXT NOT NULL,
            PRIMARY KEY (location, spec)
        ) STRICT, WITHOUT ROWID;
        """,
        // 4: priorities (docs/protocol/rest.md §1.5), beside the tree: one row per node
        // that has one, keyed like `nodes` (the node's path), so a leaf keeps its one row
        // in `nodes`.
        """
        CREATE TABLE priorities (
            path  TEXT PRIMARY KEY NOT NULL,
            kind  INTEGER NOT NULL,      -- LeafKind raw value (string, int or double)
            value ANY NOT NULL
        ) STRICT, WITHOUT ROWID;
        """,
        // 5: onDisconnect operations of the wire protocol's sessions, persisted so
        // that those of a session whose server died run when Hearth starts again.
        """
        CREATE TABLE on_disconnect (
            session   TEXT NOT NULL,     -- the session id of the handshake
            position  INTEGER NOT NULL,  -- registration order within the session
            operation TEXT NOT NULL,     -- JSON (OnDisconnectRecord)
            caller    TEXT NOT NULL,     -- JSON: the registrant's auth and admin flag
            PRIMARY KEY (session, position)
        ) STRICT, WITHOUT ROWID;
        """,
        // 6: refresh tokens remember their sign-in (ID tokens keep `auth_time` across
        // refreshes) and, once rotated, their successor: its hash, and the token itself
        // sealed with a key only the rotated token gives, so a retry whose answer was lost
        // gets the same pair.
        """
        ALTER TABLE refresh_tokens ADD COLUMN signed_in_at INTEGER;      -- ms; NULL in older rows: the family's first created_at
        ALTER TABLE refresh_tokens ADD COLUMN successor_hash TEXT;       -- set when rotated
        ALTER TABLE refresh_tokens ADD COLUMN successor_sealed TEXT;     -- hex; RefreshSeal
        ALTER TABLE refresh_tokens ADD COLUMN provider TEXT;             -- sign_in_provider of the sign-in, when not the user's own (custom)
        ALTER TABLE refresh_tokens ADD COLUMN claims TEXT;               -- JSON object: the sign-in's own claims (a custom token's)
        """,
        // 7: email action codes: password reset and email verification, single
        // use, expiring, stored hashed like refresh tokens.
        """
        CREATE TABLE oob_codes (
            hash       TEXT PRIMARY KEY NOT NULL,   -- SHA-256 of the code; the code is never stored
            uid        TEXT NOT NULL REFERENCES users(uid) ON DELETE CASCADE,
            kind       TEXT NOT NULL,               -- PASSWORD_RESET or VERIFY_EMAIL
            email      TEXT NOT NULL,               -- the address it was sent to
            created_at INTEGER NOT NULL,            -- ms
            expires_at INTEGER NOT NULL,            -- ms
            used_at    INTEGER                      -- ms; set once used
        ) STRICT;
        CREATE INDEX oob_codes_uid ON oob_codes(uid);
        """,
        // 8: the admin console's own administrators and their sessions: not
        // app users; sessions kept here so a restart does not sign anyone out.
        """
        CREATE TABLE console_admins (
            email         TEXT PRIMARY KEY NOT NULL,    -- lower-case
            password_hash TEXT NOT NULL,                -- PHC scrypt, as users' passwords
            created_at    INTEGER NOT NULL,             -- ms
            password_at   INTEGER NOT NULL              -- ms; sessions from before are ended
        ) STRICT;
        CREATE TABLE console_sessions (
            hash       TEXT PRIMARY KEY NOT NULL,       -- SHA-256 of the cookie's token
            email      TEXT NOT NULL,
            csrf       TEXT NOT NULL,                   -- the session's CSRF token (sent to the page)
            created_at INTEGER NOT NULL,                -- ms
            seen_at    INTEGER NOT NULL                 -- ms, refreshed at most once a minute
        ) STRICT;
        CREATE INDEX console_sessions_email ON console_sessions(email);
        CREATE TABLE rules_history (
            id       INTEGER PRIMARY KEY,              -- increasing
            saved_at INTEGER NOT NULL,                 -- ms
            saved_by TEXT NOT NULL,                    -- the administrator's email
            text     TEXT NOT NULL                     -- the rules file as saved
        ) STRICT;
        """,
        // 9: query_index again, its primary key's columns declared first. Declared
        // after other NOT NULL columns, they made SQLite 3.40.0-3.41.0's integrity_check (and
        // quick_check) report "NULL value in query_index.rank" for rows that hold none, so
        // every backup of an indexed database failed its check on Debian 12's SQLite 3.40.1.
        // The rows are copied; the shape of every WITHOUT ROWID table is checked by
        // SchemaShapeTests.
        """
        CREATE TABLE query_index_9 (
            location  TEXT NOT NULL,
            spec      TEXT NOT NULL,
            child_key TEXT NOT NULL,
            rank      INTEGER NOT NULL,  -- QueryOrder.rank: 0 null/missing .. 5 object
            value     ANY NOT NULL,      -- the number or string; 0 for ranks without one
            key_order TEXT NOT NULL,     -- the child key in a form whose byte order is Firebase key order
            PRIMARY KEY (location, spec, child_key)
        ) STRICT, WITHOUT ROWID;
        INSERT INTO query_index_9(location, spec, child_key, rank, value, key_order)
            SELECT location, spec, child_key, rank, value, key_order FROM query_index;
        DROP TABLE query_index;
        ALTER TABLE query_index_9 RENAME TO query_index;
        CREATE INDEX query_index_order ON query_index(location, spec, rank, value, key_order);
        """,
        // 10: the triggers' outbox (docs/design.md §11): the events a write causes,
        // inserted in the write's own savepoint, deleted once delivered; and the dead letters,
        // events given up on, which keep their ids so a re-send puts them back as they were.
        """
        CREATE TABLE trigger_outbox (
            id              INTEGER PRIMARY KEY AUTOINCREMENT,  -- commit order; never reused
            trigger_name    TEXT NOT NULL,
            seq             INTEGER NOT NULL,          -- the causing write's change seq
            at              INTEGER NOT NULL,          -- its commit time, ms
            payload         BLOB NOT NULL,             -- opaque (the triggers module's JSON)
            attempts        INTEGER NOT NULL DEFAULT 0,
            last_error      TEXT,
            next_attempt_at INTEGER NOT NULL DEFAULT 0 -- ms; 0: now
        ) STRICT;
        CREATE INDEX trigger_outbox_trigger ON trigger_outbox(trigger_name, id);
        CREATE TABLE trigger_dead (
            id              INTEGER PRIMARY KEY,       -- the event's outbox id, kept
            trigger_name    TEXT NOT NULL,
            seq             INTEGER NOT NULL,
            at              INTEGER NOT NULL,
            payload         BLOB NOT NULL,
            attempts        INTEGER NOT NULL,
            last_error      TEXT,
            next_attempt_at INTEGER NOT NULL,
            reason          TEXT NOT NULL,
            died_at         INTEGER NOT NULL           -- ms
        ) STRICT;
        CREATE INDEX trigger_dead_trigger ON trigger_dead(trigger_name, id);
        """,
        // 11: identity providers' accounts linked to users: Firebase's
        // providerUserInfo; one user per provider account, one account per provider per user.
        """
        CREATE TABLE provider_links (
            provider_id  TEXT NOT NULL,           -- 'google.com', 'apple.com', 'oidc.<name>'
            raw_id       TEXT NOT NULL,           -- the provider's sub
            uid          TEXT NOT NULL REFERENCES users(uid) ON DELETE CASCADE,
            email        TEXT,
            display_name TEXT,
            photo_url    TEXT,
            PRIMARY KEY (provider_id, raw_id),
            UNIQUE (uid, provider_id)
        ) STRICT, WITHOUT ROWID;
        """,
        // 12: the tree without a rowid: each leaf lives once, in its path's
        // b-tree, where it lived twice (the table by rowid and its primary key's index), so
        // a write inserts each leaf once and dirties fewer pages (~10 % more creates per
        // second). The rows are copied in path order, in the migration's one transaction:
        // opening an older database takes about as long as a backup and needs the tree's
        // size again in free space until it commits. Its key is its first column, the
        // shape SQLite 3.40's integrity check reads correctly (migration 9).
        """
        CREATE TABLE nodes_12 (
            path  TEXT PRIMARY KEY NOT NULL,   -- segments joined by '/', '' is the root
            kind  INTEGER NOT NULL,            -- LeafKind raw value
            value ANY
        ) STRICT, WITHOUT ROWID;
        INSERT INTO nodes_12(path, kind, value) SELECT path, kind, value FROM nodes ORDER BY path;
        DROP TABLE nodes;
        ALTER TABLE nodes_12 RENAME TO nodes;
        """,
        // 13: schedules' marks: per schedule trigger, the latest due time recorded into the
        // outbox and the schedule it was computed for, so each due time becomes one event
        // across restarts (`TriggerOutbox.recordDue`).
        """
        CREATE TABLE trigger_schedules (
            trigger_name TEXT PRIMARY KEY NOT NULL,
            schedule     TEXT NOT NULL,          -- time zone and expression
            last_due_at  INTEGER NOT NULL        -- ms
        ) STRICT, WITHOUT ROWID;
        """,
    ]

    static var currentVersion: Int { migrations.count }

    /// How long `useWAL` waits between tries while another connection holds the lock the
    /// switch needs, milliseconds.
    static let walSwitchPauseMilliseconds: Int32 = 5

    /// Puts the database in write-ahead-log mode (a no-op once it is). The first switch of
    /// a new file needs its exclusive lock, and SQLite does not wait for that one through
    /// `busy_timeout` (it answers `SQLITE_BUSY` at once rather than risk a deadlock), so a
    /// second process opening the same new file at that moment (`hearth token` beside a
    /// starting server) tries again every `walSwitchPauseMilliseconds`, for as long as
    /// `busyTimeoutMilliseconds` in all, then fails with the busy error.
    static func useWAL(_ connection: SQLiteConnection, busyTimeoutMilliseconds: Int) throws(StoreError) {
        var waited = 0
        while true {
            do {
                try connection.execute("PRAGMA journal_mode = WAL")
                return
            } catch where error.isBusy && waited < busyTimeoutMilliseconds {
                sqlite3_sleep(walSwitchPauseMilliseconds)
                waited += Int(walSwitchPauseMilliseconds)
            }
        }
    }

    /// Brings the database at `connection` to `currentVersion`, one migration per
    /// transaction. Safe when several processes open the same new (or old) database at
    /// once (a server and `hearth token`, say): each step takes the write lock first
    /// (`BEGIN IMMEDIATE`, waiting up to the connection's `busy_timeout`) and only then
    /// reads the version, so a step another process committed meanwhile is skipped, never
    /// run twice (`table … already exists`). The caller sets `busy_timeout` first.
    /// Returns how many steps this connection ran.
    @discardableResult
    static func migrate(_ connection: SQLiteConnection) throws(StoreError) -> Int {
        var steps = 0
        while true {
            try connection.execute("BEGIN IMMEDIATE")
            do throws(StoreError) {
                let found = Int(try connection.scalarInt("PRAGMA user_version") ?? 0)
                guard found <= currentVersion else { throw .schemaTooNew(found: found, known: currentVersion) }
                guard found < currentVersion else {
                    try connection.execute("COMMIT")
                    return steps
                }
                try connection.execute(migrations[found])
                try connection.execute("PRAGMA user_version = \(found + 1)")
                try connection.execute("COMMIT")
                steps += 1
            } catch {
                try? connection.execute("ROLLBACK")
                throw error
            }
        }
    }
}
