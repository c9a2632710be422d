import HearthStore

/// The console's administrators, sessions and rules history in the shared database: a
/// session started on one node is valid on every node, and ends on every node at once.
public struct PostgresConsoleRecords: ConsoleRecords {
    let engine: PostgresEngine
    typealias Admin = ConsoleStore.Admin
    typealias SessionRecord = ConsoleStore.SessionRecord

    public func admin(email: String) throws -> ConsoleStore.Admin? {
        try engine.withAux { connection in
            let r = try connection.query("SELECT email, password_hash, created_at, password_at FROM console_admins WHERE email = $1", [.text(email)])
            return r.rowCount > 0 ? Admin(email: r.text(0, 0), passwordHash: r.text(0, 1), createdAt: r.int64(0, 2), passwordAt: r.int64(0, 3)) : nil
        }
    }

    public func admins() throws -> [ConsoleStore.Admin] {
        try engine.withAux { connection in
            let r = try connection.query("SELECT email, password_hash, created_at, password_at FROM console_admins ORDER BY email COLLATE \"C\"")
            return (0..<r.rowCount).map { Admin(email: r.text($0, 0), passwordHash: r.text($0, 1), createdAt: r.int64($0, 2), passwordAt: r.int64($0, 3)) }
        }
    }

    public func insert(_ admin: ConsoleStore.Admin) throws {
        try engine.withAux { connection in
            do {
                _ = try connection.query("INSERT INTO console_admins(email, password_hash, created_at, password_at) VALUES ($1, $2, $3, $4)",
                                         [.text(admin.email), .text(admin.passwordHash), .int(admin.createdAt), .int(admin.passwordAt)])
            } catch StoreError.engine(let failure) where failure.kind == .constraint {
                throw ConsoleStore.Failure.exists
            }
        }
    }

    public func setPassword(email: String, hash: String, at time: Int64) throws {
        try engine.inTransaction { connection in
            let changed = try connection.query("UPDATE console_admins SET password_hash = $1, password_at = $2 WHERE email = $3",
                                               [.text(hash), .int(time), .text(email)]).affectedRows
            guard changed > 0 else { throw ConsoleStore.Failure.notFound }
            _ = try connection.query("DELETE FROM console_sessions WHERE email = $1", [.text(email)])
        }
    }

    public func remove(email: String) throws {
        try engine.inTransaction { connection in
            _ = try connection.query("DELETE FROM console_sessions WHERE email = $1", [.text(email)])
            guard try connection.query("DELETE FROM console_admins WHERE email = $1", [.text(email)]).affectedRows > 0 else {
                throw ConsoleStore.Failure.notFound
            }
        }
    }

    public func addSession(_ session: ConsoleStore.SessionRecord) throws {
        try engine.withAux { connection in
            _ = try connection.query("INSERT INTO console_sessions(hash, email, csrf, created_at, seen_at) VALUES ($1, $2, $3, $4, $5)",
                                     [.text(session.hash), .text(session.email), .text(session.csrf), .int(session.createdAt), .int(session.seenAt)])
        }
    }

    public func session(hash: String) throws -> ConsoleStore.SessionRecord? {
        try engine.withAux { connection in
            let r = try connection.query("SELECT email, csrf, created_at, seen_at FROM console_sessions WHERE hash = $1", [.text(hash)])
            return r.rowCount > 0 ? SessionRecord(hash: hash, email: r.text(0, 0), csrf: r.text(0, 1), createdAt: r.int64(0, 2), seenAt: r.int64(0, 3)) : nil
        }
    }

    public func touchSession(hash: String, at time: Int64) throws {
        try engine.withAux { connection in
            _ = try connection.query("UPDATE console_sessions SET seen_at = $1 WHERE hash = $2", [.int(time), .text(hash)])
        }
    }

    public func endSession(hash: String) throws {
        try engine.withAux { connection in
            _ = try connection.query("DELETE FROM console_sessions WHERE hash = $1", [.text(hash)])
        }
    }

    public func pruneSessions(idleBefore: Int64, createdBefore: Int64) throws {
        try engine.withAux { connection in
            _ = try connection.query("DELETE FROM console_sessions WHERE seen_at <= $1 OR created_at <= $2", [.int(idleBefore), .int(createdBefore)])
        }
    }

    public func recordRules(_ text: String, by email: String, at time: Int64, keep: Int) throws {
        try engine.inTransaction { connection in
            _ = try connection.query("INSERT INTO rules_history(saved_at, saved_by, text) VALUES ($1, $2, $3)", [.int(time), .text(email), .text(text)])
            _ = try connection.query("DELETE FROM rules_history WHERE id NOT IN (SELECT id FROM rules_history ORDER BY id DESC LIMIT $1)", [.int(Int64(keep))])
        }
    }

    public func rulesHistory() throws -> [ConsoleStore.RulesVersion] {
        try engine.withAux { connection in
            let r = try connection.query("SELECT id, saved_at, saved_by, text FROM rules_history ORDER BY id DESC")
            return (0..<r.rowCount).map { ConsoleStore.RulesVersion(id: r.int64($0, 0), savedAt: r.int64($0, 1), savedBy: r.text($0, 2), text: r.text($0, 3)) }
        }
    }
}

/// onDisconnect records in the shared database, each with the lease (node id) of the node
/// holding its connection. A node's records become orphans when its lease runs out (it
/// died, was cut off or paused, or stopped cleanly, which ends its lease at once); a live
/// node takes them over, deleting the dead lease's row in the same transaction, so the
/// lease cannot come back. Every change a node makes to records depends on its own lease
/// and checks it in the same statement or transaction (`NodeLease.liveSQL`); running an
/// operation consumes its record in the write's transaction (`WriteFence`), so each
/// operation is written once, by whichever node holds its record then.
public struct PostgresOnDisconnectRecords: OnDisconnectRecords {
    let engine: PostgresEngine

    public var leaseEpoch: String? { engine.nodeID }

    /// The failure of a change that needs this node's lease while it holds none.
    private var noLease: StoreError { PostgresEngine.noLease(operation: "onDisconnect") }

    public func add(_ record: OnDisconnectRecord) throws {
        // Without a lease under this id, another node could take the record at once.
        guard engine.holdsLease else { throw noLease }
        let (node, now) = (engine.nodeID, engine.leaseNow)
        let added = try engine.withAux { connection in
            try connection.query("""
                INSERT INTO on_disconnect(session, position, operation, caller, node)
                SELECT $1, $2, $3, $4, $5 WHERE EXISTS (SELECT 1 FROM hearth_nodes WHERE id = $5 AND lease_until >= \(NodeLease.now(6)))
                ON CONFLICT (session, position) DO UPDATE SET operation = excluded.operation, caller = excluded.caller, node = excluded.node
                """, [.text(record.session), .int(record.position), .text(record.operation), .text(record.caller), .text(node), now]).affectedRows
        }
        guard added > 0 else { throw noLease }
    }

    /// Only this node's own records under its live lease: records another node took over
    /// are that node's to run.
    public func remove(session: String, positions: [Int64]) throws {
        if positions.isEmpty { return }
        try removeOwn(session: session, positions: positions)
    }

    public func removeAll(session: String) throws {
        try removeOwn(session: session, positions: nil)
    }

    private func removeOwn(session: String, positions: [Int64]?) throws {
        let (node, now) = (engine.nodeID, engine.leaseNow)
        try engine.withAux { connection in
            _ = try connection.query("""
                DELETE FROM on_disconnect WHERE session = $1 AND node = $2
                AND ($4::bigint[] IS NULL OR position = ANY($4::bigint[]))
                AND EXISTS (SELECT 1 FROM hearth_nodes WHERE id = $2 AND lease_until >= \(NodeLease.now(3)))
                """, [.text(session), .text(node), now, positions.map { .text(PGArray.literal($0.map(String.init))) } ?? .null])
        }
    }

    /// Takes over the records of nodes whose lease ran out, deleting those leases: in one
    /// transaction under this node's own live lease (else it takes nothing). The delete
    /// locks each dead lease's row, so it waits for a transaction of that node still
    /// fenced on it, and then finds the lease renewed (and leaves it) or still dead. A
    /// page takes whole sessions (a session's records are never split between two nodes,
    /// whose runs of them could interleave), by the sizes of their records summed in the
    /// database, so only the page's records are sent.
    public func orphans(after: String?, bytes: Int) throws -> [OnDisconnectRecord] {
        let (node, now) = (engine.nodeID, engine.leaseNow)
        return try engine.inTransaction { connection in
            guard try connection.query(NodeLease.liveSQL, [.text(node), now]).rowCount > 0 else { return [] }
            _ = try connection.query("DELETE FROM hearth_nodes WHERE lease_until < \(NodeLease.now(1)) AND id <> $2", [now, .text(node)])
            let taken = try connection.query("""
                WITH sizes AS (
                    SELECT session, sum(octet_length(operation) + octet_length(caller)) AS bytes FROM on_disconnect
                    WHERE node <> $1 AND node NOT IN (SELECT id FROM hearth_nodes) AND ($2::text IS NULL OR session > $2)
                    GROUP BY session),
                page AS (
                    SELECT session FROM (SELECT session, sum(bytes) OVER (ORDER BY session) - bytes AS before FROM sizes) AS running
                    WHERE before < greatest($3::bigint, 1))
                UPDATE on_disconnect SET node = $1
                WHERE node <> $1 AND node NOT IN (SELECT id FROM hearth_nodes) AND session IN (SELECT session FROM page)
                RETURNING session, position, operation, caller
                """, [.text(node), after.map { .text($0) } ?? .null, .int(Int64(bytes))])
            return Self.records(taken)
        }
    }

    /// The records of `session`, whichever node holds them (a reconnecting client named
    /// it): this node's now, under its live lease, in one transaction. The node that held
    /// them writes none of them any more (`WriteFence`).
    public func claim(session: String) throws -> [OnDisconnectRecord] {
        guard engine.holdsLease else { throw noLease }
        let (node, now) = (engine.nodeID, engine.leaseNow)
        return try engine.inTransaction { connection in
            guard try connection.query(NodeLease.liveSQL, [.text(node), now]).rowCount > 0 else { throw noLease }
            return Self.records(try connection.query("""
                UPDATE on_disconnect SET node = $1 WHERE session = $2
                RETURNING session, position, operation, caller
                """, [.text(node), .text(session)]))
        }
    }

    /// Records from `(session, position, operation, caller)` rows, by session and position.
    private static func records(_ rows: PGResult) -> [OnDisconnectRecord] {
        var records = (0..<rows.rowCount).map {
            OnDisconnectRecord(session: rows.text($0, 0), position: rows.int64($0, 1), operation: rows.text($0, 2), caller: rows.text($0, 3))
        }
        records.sort { ($0.session, $0.position) < ($1.session, $1.position) }
        return records
    }
}

/// The signing keys in the shared database: the newest signs. A rotation on one node
/// verifies on every node at once (an unknown `kid` is looked up) and signs on every node
/// within `Engines.keyReloadInterval`.
public struct PostgresKeyStore: SigningKeyStore {
    let engine: PostgresEngine

    public func load() throws -> StoredSigningKeys? {
        try engine.withAux { connection in
            let r = try connection.query("SELECT kid, private_key FROM signing_keys ORDER BY created")
            guard r.rowCount > 0 else { return nil }
            var keys: [String: String] = [:]
            for row in 0..<r.rowCount { keys[r.text(row, 0)] = r.text(row, 1) }
            return StoredSigningKeys(current: r.text(r.rowCount - 1, 0), keys: keys)
        }
    }

    public func add(kid: String, privateKey: String) throws {
        try engine.withAux { connection in
            _ = try connection.query("INSERT INTO signing_keys(kid, private_key) VALUES ($1, $2)", [.text(kid), .text(privateKey)])
        }
    }

    public func contains(kid: String) -> Bool {
        (try? engine.withAux { try $0.query("SELECT 1 FROM signing_keys WHERE kid = $1", [.text(kid)]).rowCount > 0 }) ?? false
    }
}

/// Rate-limit counters in the shared database: each update locks the rows of its keys
/// (`FOR UPDATE`), so attempts on every node count against one limit, in order.
public struct PostgresLimitCounters: LimitCounters {
    let engine: PostgresEngine
    /// Updates between two prunes of records nobody needs any more (per node).
    static let pruneEvery = 1_000

    public func update<R>(_ keys: [String], now: Int64, keepSeconds: Int64, _ update: (inout [String: LimitRecord]) -> R) throws -> R {
        let list = PGArray.literal(keys)
        let result = try engine.inTransaction { connection in
            _ = try connection.query("INSERT INTO limit_counters(key, count, start, last) SELECT unnest($1::text[]), 0, 0, 0 ON CONFLICT (key) DO NOTHING",
                                     [.text(list)])
            let rows = try connection.query("SELECT key, count, start, last FROM limit_counters WHERE key = ANY($1::text[]) ORDER BY key FOR UPDATE",
                                            [.text(list)])
            var records: [String: LimitRecord] = [:]
            for row in 0..<rows.rowCount {
                let record = LimitRecord(count: rows.int64(row, 1), start: rows.int64(row, 2), last: rows.int64(row, 3))
                if record != LimitRecord() { records[rows.text(row, 0)] = record }
            }
            let answer = update(&records)
            for key in keys {
                let record = records[key] ?? LimitRecord()
                if record == LimitRecord() {
                    _ = try connection.query("DELETE FROM limit_counters WHERE key = $1", [.text(key)])
                } else {
                    _ = try connection.query("UPDATE limit_counters SET count = $2, start = $3, last = $4 WHERE key = $1",
                                             [.text(key), .int(record.count), .int(record.start), .int(record.last)])
                }
            }
            return answer
        }
        if engine.limitUpdates.add(1, ordering: .relaxed).newValue % Self.pruneEvery == 0 {
            _ = try? engine.withAux { connection in
                try connection.query("DELETE FROM limit_counters WHERE last < $1 AND start < $1", [.int(now - keepSeconds)])
            }
        }
        return result
    }
}
