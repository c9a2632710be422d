import HearthStore

/// The triggers' outbox in the shared database (migration 6, docs/design.md §11). Events
/// are inserted by the writer in each write's transaction (`record`), after it took the
/// `last_seq` row lock, so their ids follow commit order across nodes. Delivery state
/// changes run on an auxiliary connection; a lease per trigger lets one node at a time
/// deliver its events.
public struct PostgresTriggerOutbox: TriggerOutbox {
    let engine: PostgresEngine

    static let columns = "id, trigger_name, seq, at, payload, attempts, last_error, next_attempt_at"

    /// Inserts the events of the write logged as `change`, in order (on the writer, inside
    /// the batch's transaction).
    static func record(_ events: [OutboxEvent], of change: Change, connection: PGConnection) throws(StoreError) {
        if events.isEmpty { return }
        let hex = Array("0123456789abcdef".utf8)
        let payloads = events.map { event -> String? in
            var text = [UInt8]("\\x".utf8)
            text.reserveCapacity(2 + 2 * event.payload.count)
            for byte in event.payload { text.append(hex[Int(byte >> 4)]); text.append(hex[Int(byte & 0x0F)]) }
            return String(decoding: text, as: UTF8.self)
        }
        _ = try connection.query("""
            INSERT INTO trigger_outbox(trigger_name, seq, at, payload)
            SELECT t, $1, $2, p FROM unnest($3::text[], $4::bytea[]) WITH ORDINALITY AS u(t, p, n) ORDER BY n
            """, [.int(change.seq), .int(change.at), .text(PGArray.literal(events.map(\.trigger))), .text(PGArray.literal(payloads))])
    }

    public func pending(trigger: String, now: Int64, limit: Int) throws -> [OutboxRecord] {
        try select(trigger, "next_attempt_at <= $2", now, limit)
    }

    public func pending(trigger: String, after: Int64, limit: Int) throws -> [OutboxRecord] {
        try select(trigger, "id > $2", after, limit)
    }

    /// One trigger's pending events meeting `condition` (on `$2`: `value`), in id order, at
    /// most `limit`.
    private func select(_ trigger: String, _ condition: String, _ value: Int64, _ limit: Int) throws -> [OutboxRecord] {
        try engine.withAux { connection in
            let r = try connection.query("SELECT \(Self.columns) FROM trigger_outbox WHERE trigger_name = $1 AND \(condition) ORDER BY id LIMIT $3",
                                         [.text(trigger), .int(value), .int(Int64(max(0, limit)))])
            return (0..<r.rowCount).map { Self.record(r, $0) }
        }
    }

    public func delivered(ids: [Int64]) throws {
        if ids.isEmpty { return }
        try engine.withAux { connection in
            _ = try connection.query("DELETE FROM trigger_outbox WHERE id = ANY($1::bigint[])", [.text(PGArray.literal(ids.map(String.init)))])
        }
    }

    public func failed(id: Int64, error: String, nextAttemptAt: Int64) throws {
        try engine.withAux { connection in
            _ = try connection.query("UPDATE trigger_outbox SET attempts = attempts + 1, last_error = $1, next_attempt_at = $2 WHERE id = $3",
                                     [.text(error), .int(nextAttemptAt), .int(id)])
        }
    }

    public func unreached(id: Int64, error: String, nextAttemptAt: Int64) throws {
        try engine.withAux { connection in
            _ = try connection.query("UPDATE trigger_outbox SET last_error = $1, next_attempt_at = $2 WHERE id = $3",
                                     [.text(error), .int(nextAttemptAt), .int(id)])
        }
    }

    public func park(ids: [Int64], reason: String, at: Int64) throws -> [Int64] {
        if ids.isEmpty { return [] }
        return try engine.withAux { connection in
            let r = try connection.query("""
                WITH gone AS (DELETE FROM trigger_outbox WHERE id = ANY($1::bigint[]) RETURNING \(Self.columns))
                INSERT INTO trigger_dead(\(Self.columns), reason, died_at) SELECT \(Self.columns), $2, $3 FROM gone
                ON CONFLICT (id) DO UPDATE SET reason = excluded.reason, died_at = excluded.died_at
                RETURNING id
                """, [.text(PGArray.literal(Set(ids).map(String.init))), .text(reason), .int(at)])
            return (0..<r.rowCount).map { r.int64($0, 0) }.sorted()
        }
    }

    public func oldestPending(trigger: String?) throws -> [String: OutboxRecord] {
        try engine.withAux { connection in
            let r = try connection.query("""
                SELECT \(Self.columns) FROM trigger_outbox WHERE id IN
                    (SELECT min(id) FROM trigger_outbox WHERE $1::text IS NULL OR trigger_name = $1 GROUP BY trigger_name)
                """, [trigger.map { .text($0) } ?? .null])
            var oldest: [String: OutboxRecord] = [:]
            for row in 0..<r.rowCount {
                let record = Self.record(r, row)
                oldest[record.trigger] = record
            }
            return oldest
        }
    }

    public func kill(id: Int64, reason: String, at: Int64) throws {
        try engine.withAux { connection in
            _ = try connection.query("""
                WITH gone AS (DELETE FROM trigger_outbox WHERE id = $1 RETURNING \(Self.columns))
                INSERT INTO trigger_dead(\(Self.columns), reason, died_at) SELECT \(Self.columns), $2, $3 FROM gone
                ON CONFLICT (id) DO UPDATE SET reason = excluded.reason, died_at = excluded.died_at
                """, [.int(id), .text(reason), .int(at)])
        }
    }

    public func killNewest(trigger: String, keep: Int, reason: String, at: Int64) throws -> Int {
        try engine.withAux { connection in
            try connection.query("""
                WITH cut AS (SELECT id FROM trigger_outbox WHERE trigger_name = $1 ORDER BY id OFFSET $2 LIMIT 1),
                     gone AS (DELETE FROM trigger_outbox WHERE trigger_name = $1 AND id > (SELECT id FROM cut) RETURNING \(Self.columns))
                INSERT INTO trigger_dead(\(Self.columns), reason, died_at) SELECT \(Self.columns), $3, $4 FROM gone
                ON CONFLICT (id) DO UPDATE SET reason = excluded.reason, died_at = excluded.died_at
                """, [.text(trigger), .int(Int64(max(1, keep) - 1)), .text(reason), .int(at)]).affectedRows
        }
    }

    public func deadLetters(trigger: String?, limit: Int) throws -> [DeadLetter] {
        try engine.withAux { connection in
            let r = try connection.query("SELECT \(Self.columns), reason, died_at FROM trigger_dead WHERE $1::text IS NULL OR trigger_name = $1 ORDER BY id LIMIT $2",
                                         [trigger.map { .text($0) } ?? .null, .int(Int64(max(0, limit)))])
            return (0..<r.rowCount).map { DeadLetter(record: Self.record(r, $0), reason: r.text($0, 8), diedAt: r.int64($0, 9)) }
        }
    }

    public func resend(ids: [Int64]) throws -> Int {
        if ids.isEmpty { return 0 }
        return try engine.withAux { connection in
            try connection.query("""
                WITH back AS (DELETE FROM trigger_dead WHERE id = ANY($1::bigint[]) RETURNING id, trigger_name, seq, at, payload)
                INSERT INTO trigger_outbox(\(Self.columns)) SELECT id, trigger_name, seq, at, payload, 0, NULL, 0 FROM back
                """, [.text(PGArray.literal(ids.map(String.init)))]).affectedRows
        }
    }

    public func backlog() throws -> [String: (pending: Int, oldestAt: Int64?)] {
        try engine.withAux { connection in
            let r = try connection.query("SELECT trigger_name, count(*), min(at) FROM trigger_outbox GROUP BY trigger_name")
            var backlog: [String: (pending: Int, oldestAt: Int64?)] = [:]
            for row in 0..<r.rowCount { backlog[r.text(row, 0)] = (Int(r.int64(row, 1)), r.int64(row, 2)) }
            return backlog
        }
    }

    public func pendingCount(trigger: String) throws -> Int {
        try engine.withAux { connection in
            Int(try connection.query("SELECT count(*) FROM trigger_outbox WHERE trigger_name = $1", [.text(trigger)]).int64(0, 0))
        }
    }

    public func storedBytes(trigger: String?) throws -> [String: OutboxBytes] {
        try engine.withAux { connection in
            // octet_length of a stored bytea reads its size, not its content.
            let r = try connection.query("""
                SELECT trigger_name, sum(pending)::bigint, sum(dead)::bigint FROM (
                    SELECT trigger_name, octet_length(payload) AS pending, 0 AS dead FROM trigger_outbox WHERE $1::text IS NULL OR trigger_name = $1
                    UNION ALL SELECT trigger_name, 0, octet_length(payload) FROM trigger_dead WHERE $1::text IS NULL OR trigger_name = $1) s
                GROUP BY trigger_name
                """, [trigger.map { .text($0) } ?? .null])
            var bytes: [String: OutboxBytes] = [:]
            for row in 0..<r.rowCount { bytes[r.text(row, 0)] = OutboxBytes(pending: r.int64(row, 1), dead: r.int64(row, 2)) }
            return bytes
        }
    }

    public func trim(trigger: String, maxBytes: Int64) throws -> OutboxTrim {
        try engine.inTransaction { connection in
            // The newest pending events past the budget: from the first whose running total
            // (in id order) exceeds it.
            let dropped = try connection.query("""
                DELETE FROM trigger_outbox WHERE trigger_name = $1 AND id >= (SELECT min(id) FROM (
                    SELECT id, sum(octet_length(payload)) OVER (ORDER BY id) AS running FROM trigger_outbox WHERE trigger_name = $1) r
                    WHERE running > $2)
                """, [.text(trigger), .int(maxBytes)]).affectedRows
            // The oldest dead letters past what the pending events leave: up to the newest
            // whose running total (newest first) exceeds it.
            let removed = try connection.query("""
                DELETE FROM trigger_dead WHERE trigger_name = $1 AND id <= (SELECT max(id) FROM (
                    SELECT id, sum(octet_length(payload)) OVER (ORDER BY id DESC) AS running FROM trigger_dead WHERE trigger_name = $1) r
                    WHERE running > $2 - (SELECT coalesce(sum(octet_length(payload)), 0) FROM trigger_outbox WHERE trigger_name = $1))
                """, [.text(trigger), .int(maxBytes)]).affectedRows
            return OutboxTrim(deadRemoved: removed, pendingDropped: dropped)
        }
    }

    public func pruneDeadLetters(diedBefore: Int64) throws -> [String: Int] {
        try engine.withAux { connection in
            let r = try connection.query("""
                WITH gone AS (DELETE FROM trigger_dead WHERE died_at < $1 RETURNING trigger_name)
                SELECT trigger_name, count(*) FROM gone GROUP BY trigger_name
                """, [.int(diedBefore)])
            var removed: [String: Int] = [:]
            for row in 0..<r.rowCount { removed[r.text(row, 0)] = Int(r.int64(row, 1)) }
            return removed
        }
    }

    /// The mark's row is locked (`FOR UPDATE`) for the transaction: a second node recording
    /// the same due time waits, then reads the moved mark and records nothing. Two nodes
    /// setting a first mark at once: one inserts it, the other's insert does nothing.
    public func recordDue(trigger: String, schedule: String, dueAt: Int64, payload: [UInt8]) throws -> Bool {
        try engine.inTransaction { connection in
            let mark = try connection.query("SELECT schedule, last_due_at FROM trigger_schedules WHERE trigger_name = $1 FOR UPDATE", [.text(trigger)])
            guard mark.rowCount > 0 else {
                _ = try connection.query("INSERT INTO trigger_schedules(trigger_name, schedule, last_due_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
                                         [.text(trigger), .text(schedule), .int(dueAt)])
                return false
            }
            let same = mark.text(0, 0) == schedule
            if same && mark.int64(0, 1) >= dueAt { return false }
            _ = try connection.query("UPDATE trigger_schedules SET schedule = $2, last_due_at = $3 WHERE trigger_name = $1",
                                     [.text(trigger), .text(schedule), .int(dueAt)])
            guard same else { return false }  // changed: it fires from its next due time
            _ = try connection.query("INSERT INTO trigger_outbox(trigger_name, seq, at, payload) VALUES ($1, 0, $2, $3)",
                                     [.text(trigger), .int(dueAt), .bytes(payload)])
            return true
        }
    }

    /// Takes `trigger`'s lease when it is free (never taken, run out, or its node's own
    /// lease ended: that node died or stopped), or renews it when this node holds it, in
    /// one statement. A node that holds no lease of its own takes none.
    public func lease(trigger: String, seconds: Int) throws -> Bool {
        guard engine.holdsLease else { return false }
        let now = engine.clock()
        return try engine.withAux { connection in
            try connection.query("""
                INSERT INTO trigger_leases AS l(trigger_name, node, lease_until) VALUES ($1, $2, $3)
                ON CONFLICT (trigger_name) DO UPDATE SET node = excluded.node, lease_until = excluded.lease_until
                WHERE l.node = excluded.node OR l.lease_until < $4
                   OR l.node NOT IN (SELECT id FROM hearth_nodes WHERE lease_until >= $4)
                RETURNING node
                """, [.text(trigger), .text(engine.nodeID), .int(now + Int64(max(0, seconds)) * 1000), .int(now)]).rowCount > 0
        }
    }

    private static func record(_ r: PGResult, _ row: Int) -> OutboxRecord {
        OutboxRecord(id: r.int64(row, 0), trigger: r.text(row, 1), seq: r.int64(row, 2), at: r.int64(row, 3), payload: r.bytes(row, 4),
                     attempts: Int(r.int64(row, 5)), lastError: r.isNull(row, 6) ? nil : r.text(row, 6), nextAttemptAt: r.int64(row, 7))
    }
}
