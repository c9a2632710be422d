import HearthStore

/// The PostgreSQL engine's schema, versioned in `hearth_meta` and migrated
/// forward only, once, by whichever node takes the advisory lock first; the others wait
/// for it and then find the schema current. The same tables as the SQLite engine's
/// (`Schema`), plus the change feed's counter and the nodes' leases.
///
/// Paths use the "C" collation, so `path >= 'a/' AND path < 'a0'` is the subtree of `a`
/// (keys never contain '/', and '0' is the byte after it), as in SQLite.
enum PostgresSchema {
    /// The advisory lock key migrations run under ("hearth" in ASCII).
    static let migrationLock: Int64 = 0x6865_6172_7468

    static let migrations: [String] = [
        // 1: everything the SQLite engine has at its migration 8, and the shared parts.
        """
        CREATE TABLE hearth_meta (
            key   text PRIMARY KEY,
            value bigint NOT NULL
        );
        -- The change feed's last number: every write transaction updates this row first, so
        -- write transactions commit one at a time, in the order of their numbers.
        INSERT INTO hearth_meta(key, value) VALUES ('last_seq', 0);
        CREATE TABLE nodes (
            path text COLLATE "C" PRIMARY KEY,
            kind smallint NOT NULL,                -- LeafKind raw value
            ival bigint,                           -- int and bool leaves
            dval double precision,                 -- double leaves
            sval text                              -- string leaves
        );
        CREATE TABLE priorities (
            path text COLLATE "C" PRIMARY KEY,
            kind smallint NOT NULL,
            ival bigint,
            dval double precision,
            sval text
        );
        CREATE TABLE changes (
            seq  bigint PRIMARY KEY,              -- hearth_meta.last_seq when it was written
            path text NOT NULL,
            kind text NOT NULL,                   -- 'put' or 'patch'
            data text NOT NULL,                   -- JSON of the change, as streams send it
            at   bigint NOT NULL                  -- ms since the epoch
        );
        CREATE TABLE users (
            uid                 text PRIMARY KEY,
            email               text UNIQUE,
            password_hash       text,
            display_name        text,
            photo_url           text,
            email_verified      bigint NOT NULL DEFAULT 0,
            disabled            bigint NOT NULL DEFAULT 0,
            provider            text NOT NULL,
            custom_claims       text,
            created_at          bigint NOT NULL,
            last_login_at       bigint,
            password_updated_at bigint,
            valid_since         bigint NOT NULL
        );
        CREATE TABLE refresh_tokens (
            hash             text PRIMARY KEY,
            uid              text NOT NULL REFERENCES users(uid) ON DELETE CASCADE,
            family           text NOT NULL,
            created_at       bigint NOT NULL,
            used_at          bigint,
            revoked          bigint NOT NULL DEFAULT 0,
            signed_in_at     bigint,
            successor_hash   text,
            successor_sealed text,
            provider         text,
            claims           text
        );
        CREATE INDEX refresh_tokens_family ON refresh_tokens(family);
        CREATE INDEX refresh_tokens_uid ON refresh_tokens(uid);
        CREATE TABLE oob_codes (
            hash       text PRIMARY KEY,
            uid        text NOT NULL REFERENCES users(uid) ON DELETE CASCADE,
            kind       text NOT NULL,
            email      text NOT NULL,
            created_at bigint NOT NULL,
            expires_at bigint NOT NULL,
            used_at    bigint
        );
        CREATE INDEX oob_codes_uid ON oob_codes(uid);
        CREATE TABLE console_admins (
            email         text PRIMARY KEY,
            password_hash text NOT NULL,
            created_at    bigint NOT NULL,
            password_at   bigint NOT NULL
        );
        CREATE TABLE console_sessions (
            hash       text PRIMARY KEY,
            email      text NOT NULL,
            csrf       text NOT NULL,
            created_at bigint NOT NULL,
            seen_at    bigint NOT NULL
        );
        CREATE INDEX console_sessions_email ON console_sessions(email);
        CREATE TABLE rules_history (
            id       bigserial PRIMARY KEY,
            saved_at bigint NOT NULL,
            saved_by text NOT NULL,
            text     text NOT NULL
        );
        -- The nodes alive now: each renews its lease; the onDisconnect operations of a node
        -- whose lease ran out are taken over by a live one.
        CREATE TABLE hearth_nodes (
            id          text PRIMARY KEY,
            lease_until bigint NOT NULL            -- ms since the epoch
        );
        CREATE TABLE on_disconnect (
            session   text NOT NULL,
            position  bigint NOT NULL,
            operation text NOT NULL,
            caller    text NOT NULL,
            node      text NOT NULL,               -- the node holding the connection
            PRIMARY KEY (session, position)
        );
        CREATE INDEX on_disconnect_node ON on_disconnect(node);
        -- Signing keys every node shares: the newest signs.
        CREATE TABLE signing_keys (
            kid         text PRIMARY KEY,
            private_key text NOT NULL,             -- base64 raw Ed25519 private key
            created     bigserial NOT NULL
        );
        """,
        // 2: rate-limit counters every node shares (sign-in and sign-up limits).
        """
        CREATE TABLE limit_counters (
            key   text PRIMARY KEY,
            count bigint NOT NULL,
            start bigint NOT NULL,               -- s
            last  bigint NOT NULL                -- s
        );
        CREATE INDEX limit_counters_last ON limit_counters(last);
        """,
        // 3: one write applied in one round trip (docs/bench/history.md, "How it got
        // there": eight statements per write made the writer wait on the network). Counts the rows the write replaces
        // (up to max_replace + 1: -1 when over, and nothing is changed), deletes what its
        // entries replace (and leaves at ancestor paths of entries with a value), inserts
        // the new leaves and priorities, and logs the change as number seq.
        """
        CREATE FUNCTION hearth_apply(
            entries text[], ancestors text[], max_replace bigint,
            leaf_paths text[], leaf_kinds smallint[], leaf_ints bigint[], leaf_doubles float8[], leaf_strings text[],
            prio_paths text[], prio_kinds smallint[], prio_ints bigint[], prio_doubles float8[], prio_strings text[],
            change_seq bigint, change_path text, change_kind text, change_data text, change_at bigint
        ) RETURNS bigint LANGUAGE plpgsql AS $$
        DECLARE
            n bigint := 0;
            p text;
        BEGIN
            FOREACH p IN ARRAY entries LOOP
                IF p = '' THEN
                    n := n + (SELECT count(*) FROM (SELECT 1 FROM nodes LIMIT greatest(0, max_replace + 1 - n)) AS s);
                ELSE
                    -- Two index probes: the node itself, and the range of its descendants
                    -- (an OR of both made the planner scan the table).
                    n := n + (SELECT count(*) FROM nodes WHERE path = p);
                    n := n + (SELECT count(*) FROM (SELECT 1 FROM nodes WHERE path >= p || '/' AND path < p || '0'
                              LIMIT greatest(0, max_replace + 1 - n)) AS s);
                END IF;
                IF n > max_replace THEN RETURN -1; END IF;
            END LOOP;
            FOREACH p IN ARRAY entries LOOP
                IF p = '' THEN
                    DELETE FROM nodes;
                    DELETE FROM priorities;
                ELSE
                    DELETE FROM nodes WHERE path = p;
                    DELETE FROM nodes WHERE path >= p || '/' AND path < p || '0';
                    DELETE FROM priorities WHERE path = p;
                    DELETE FROM priorities WHERE path >= p || '/' AND path < p || '0';
                END IF;
            END LOOP;
            IF cardinality(ancestors) > 0 THEN
                DELETE FROM nodes WHERE path = ANY(ancestors);
            END IF;
            IF cardinality(leaf_paths) > 0 THEN
                INSERT INTO nodes(path, kind, ival, dval, sval)
                SELECT * FROM unnest(leaf_paths, leaf_kinds, leaf_ints, leaf_doubles, leaf_strings);
            END IF;
            IF cardinality(prio_paths) > 0 THEN
                INSERT INTO priorities(path, kind, ival, dval, sval)
                SELECT * FROM unnest(prio_paths, prio_kinds, prio_ints, prio_doubles, prio_strings)
                ON CONFLICT (path) DO UPDATE SET kind = excluded.kind, ival = excluded.ival, dval = excluded.dval, sval = excluded.sval;
            END IF;
            INSERT INTO changes(seq, path, kind, data, at) VALUES (change_seq, change_path, change_kind, change_data, change_at);
            RETURN n;
        END
        $$;
        """,
        // 4: query indexes (docs/protocol/rest.md §1.3 `.indexOn`), as the SQLite engine's
        // migration 3, with the ordered value as rank + number + string; `index_version`
        // tells every node's writer when the set of built indexes changed.
        """
        CREATE TABLE query_index (
            location  text COLLATE "C" NOT NULL,
            spec      text COLLATE "C" NOT NULL,
            rank      smallint NOT NULL,         -- QueryOrder.rank: 0 null/missing .. 5 object
            num       numeric NOT NULL,          -- the number (exact for ints and doubles); 0 otherwise
            str       text COLLATE "C" NOT NULL, -- the string; '' otherwise
            key_order text COLLATE "C" NOT NULL, -- the child key in a form whose byte order is Firebase key order
            child_key text COLLATE "C" NOT NULL,
            PRIMARY KEY (location, spec, child_key)
        );
        CREATE INDEX query_index_order ON query_index(location, spec, rank, num, str, key_order);
        CREATE TABLE query_index_built (
            location text COLLATE "C" NOT NULL,
            spec     text COLLATE "C" NOT NULL,
            PRIMARY KEY (location, spec)
        );
        INSERT INTO hearth_meta(key, value) VALUES ('index_version', 0);
        """,
        // 5: each node's last write batch, marked inside the batch's transaction, so a node
        // whose connection dropped during COMMIT can tell whether it committed.
        """
        CREATE TABLE hearth_batches (
            node  text PRIMARY KEY,
            token text NOT NULL,
            at    bigint NOT NULL
        );
        """,
        // 6: the triggers' outbox, as the SQLite engine's migration 10: ids come
        // from a sequence drawn inside the write transactions, under the `last_seq` row lock,
        // so they follow commit order across nodes. And a lease per trigger: the node that
        // delivers its events, until `lease_until` (ms) or until that node's own lease ends.
        """
        CREATE TABLE trigger_outbox (
            id              bigserial PRIMARY KEY,
            trigger_name    text NOT NULL,
            seq             bigint NOT NULL,
            at              bigint NOT NULL,
            payload         bytea NOT NULL,
            attempts        bigint NOT NULL DEFAULT 0,
            last_error      text,
            next_attempt_at bigint NOT NULL DEFAULT 0
        );
        CREATE INDEX trigger_outbox_trigger ON trigger_outbox(trigger_name, id);
        CREATE TABLE trigger_dead (
            id              bigint PRIMARY KEY,
            trigger_name    text NOT NULL,
            seq             bigint NOT NULL,
            at              bigint NOT NULL,
            payload         bytea NOT NULL,
            attempts        bigint NOT NULL,
            last_error      text,
            next_attempt_at bigint NOT NULL,
            reason          text NOT NULL,
            died_at         bigint NOT NULL
        );
        CREATE INDEX trigger_dead_trigger ON trigger_dead(trigger_name, id);
        CREATE TABLE trigger_leases (
            trigger_name text PRIMARY KEY,
            node         text NOT NULL,
            lease_until  bigint NOT NULL
        );
        """,
        // 7: identity providers' accounts linked to users, as SQLite's migration 11.
        """
        CREATE TABLE provider_links (
            uid          text NOT NULL REFERENCES users(uid) ON DELETE CASCADE,
            provider_id  text NOT NULL,
            raw_id       text NOT NULL,
            email        text,
            display_name text,
            photo_url    text,
            PRIMARY KEY (provider_id, raw_id),
            CONSTRAINT provider_links_one_per_provider UNIQUE (uid, provider_id)
        );
        """,
        // 8: schedules' marks, as SQLite's migration 13: the row is locked while a due time is
        // recorded, so each due time becomes one event across nodes.
        """
        CREATE TABLE trigger_schedules (
            trigger_name text PRIMARY KEY,
            schedule     text NOT NULL,
            last_due_at  bigint NOT NULL
        );
        """,
        // 9: a batch's writes applied in one round trip (docs/design.md §3), by
        // `hearth_apply_batch` (`applyBatchFunction`). `hearth_apply` stays for nodes of the
        // previous release until they are replaced.
        applyBatchFunction,
        // 10: a batch's mark also records the batch's last change number, so a node that
        // lost the answer to a COMMIT sent with the batch's last writes learns their numbers.
        """
        ALTER TABLE hearth_batches ADD COLUMN last_seq bigint;
        """,
        // 11: and the number before it: a batch sent whole in one exchange learns its base
        // from the ordering lock's answer, so one that lost that answer reads it here.
        """
        ALTER TABLE hearth_batches ADD COLUMN base_seq bigint;
        """,
        // 12: `hearth_apply_batch` again, as migration 9 now creates it: a batch of unrelated
        // writes deletes each entry's subtree through rows found in the index, entry by
        // entry, where it joined the entries to `nodes` (see `applyBatchFunction`).
        applyBatchFunction,
    ]

    static var currentVersion: Int { migrations.count }

    /// The schemas of namespaces other than the default (see
    /// `PostgresEngineFactory.location(ofNamespace:beside:)`).
    public static let namespaceSchemaPrefix = "hearth_ns_"

    /// When the session's `search_path` is one namespace's schema, creates it if missing
    /// (its name is checked: the prefix, then lowercase letters, digits and underscores).
    static func createNamespaceSchema(_ connection: PGConnection) throws(StoreError) {
        let path = try connection.query("SELECT current_setting('search_path')").text(0, 0)
        guard path.hasPrefix(namespaceSchemaPrefix), path.utf8.count <= 63,
              path.utf8.allSatisfy({ (97...122).contains($0) || (48...57).contains($0) || $0 == 95 }) else { return }
        try connection.execute("CREATE SCHEMA IF NOT EXISTS \(path)")
    }

    /// Brings the database to `currentVersion` under the advisory lock (one node migrates;
    /// the others wait, then see it done).
    static func migrate(_ connection: PGConnection) throws(StoreError) {
        try connection.allowingLongExchanges { () throws(StoreError) in try migrateUnderLock(connection) }
    }

    private static func migrateUnderLock(_ connection: PGConnection) throws(StoreError) {
        try connection.execute("BEGIN")
        do throws(StoreError) {
            _ = try connection.query("SELECT pg_advisory_xact_lock($1)", [.int(migrationLock)])
            try createNamespaceSchema(connection)  // under the lock: nodes may start together
            let exists = try connection.query("SELECT to_regclass('hearth_meta') IS NOT NULL")
            var found = 0
            if exists.bool(0, 0) {
                let version = try connection.query("SELECT value FROM hearth_meta WHERE key = 'schema_version'")
                found = version.rowCount > 0 ? Int(version.int64(0, 0)) : 1
            }
            guard found <= currentVersion else { throw StoreError.schemaTooNew(found: found, known: currentVersion) }
            for version in found..<currentVersion {
                try connection.execute(migrations[version])
                _ = try connection.query("""
                    INSERT INTO hearth_meta(key, value) VALUES ('schema_version', $1)
                    ON CONFLICT (key) DO UPDATE SET value = excluded.value
                    """, [.int(Int64(version + 1))])
            }
            try connection.execute("COMMIT")
        } catch {
            try? connection.execute("ROLLBACK")
            throw error
        }
    }
}
