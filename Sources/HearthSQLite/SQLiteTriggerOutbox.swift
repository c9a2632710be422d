import CSQLite
import HearthStore

/// The triggers' outbox in the tree store's database (migration 10, docs/design.md §11).
/// Events are inserted by the writer in each write's savepoint (`TreeWriter.record`); reads
/// here run on a reader, changes on the single writer queue (so they serialize with
/// writes), each in its own transaction.
public struct SQLiteTriggerOutbox: TriggerOutbox {
    let store: SQLiteTreeStore

    public init(store: SQLiteTreeStore) {
        self.store = store
    }

    static let columns = "id, trigger_name, seq, at, payload, attempts, last_error, next_attempt_at"

    public func pending(trigger: String, now: Int64, limit: Int) throws -> [OutboxRecord] {
        try select(trigger, "next_attempt_at <= ?", .integer(now), limit: limit)
    }

    public func pending(trigger: String, after: Int64, limit: Int) throws -> [OutboxRecord] {
        try select(trigger, "id > ?", .integer(after), limit: limit)
    }

    /// One trigger's pending events meeting `condition` (one `?`, `value`), in id order, at
    /// most `limit`; only events of changes on disk (`SQLiteTreeStore.durableSeq`: a batch
    /// is visible from its COMMIT, before its WAL sync), so no function runs for a write a
    /// power loss could take back. Scheduled events (seq 0) commit with SQLite's own sync.
    private func select(_ trigger: String, _ condition: String, _ value: SQLiteValue, limit: Int) throws -> [OutboxRecord] {
        let durable = store.durableSeq.load(ordering: .acquiring)
        return try store.onReader { connection in
            let statement = try connection.statement("SELECT \(Self.columns) FROM trigger_outbox"
                + " WHERE trigger_name = ? AND \(condition) AND seq <= ? ORDER BY id LIMIT ?")
            try statement.reset([.text(trigger), value, .integer(durable), .integer(Int64(max(0, limit)))])
            defer { try? statement.reset() }
            var records: [OutboxRecord] = []
            while try statement.step() { records.append(Self.record(statement)) }
            return records
        }
    }

    public func delivered(ids: [Int64]) throws {
        if ids.isEmpty { return }
        try onWriterTransaction { connection in
            let delete = try connection.statement("DELETE FROM trigger_outbox WHERE id = ?")
            for id in ids { try delete.run([.integer(id)]) }
        }
    }

    public func failed(id: Int64, error: String, nextAttemptAt: Int64) throws {
        try store.onWriter { connection in
            try connection.statement("UPDATE trigger_outbox SET attempts = attempts + 1, last_error = ?, next_attempt_at = ? WHERE id = ?")
                .run([.text(error), .integer(nextAttemptAt), .integer(id)])
        }
    }

    public func unreached(id: Int64, error: String, nextAttemptAt: Int64) throws {
        try store.onWriter { connection in
            try connection.statement("UPDATE trigger_outbox SET last_error = ?, next_attempt_at = ? WHERE id = ?")
                .run([.text(error), .integer(nextAttemptAt), .integer(id)])
        }
    }

    public func park(ids: [Int64], reason: String, at: Int64) throws -> [Int64] {
        if ids.isEmpty { return [] }
        return try onWriterTransaction { connection in
            let insert = try connection.statement("INSERT OR REPLACE INTO trigger_dead(\(Self.columns), reason, died_at)"
                + " SELECT \(Self.columns), ?, ? FROM trigger_outbox WHERE id = ?")
            let delete = try connection.statement("DELETE FROM trigger_outbox WHERE id = ?")
            var moved: [Int64] = []
            for id in Set(ids).sorted() {
                try insert.run([.text(reason), .integer(at), .integer(id)])
                guard connection.changes > 0 else { continue }
                try delete.run([.integer(id)])
                moved.append(id)
            }
            return moved
        }
    }

    public func oldestPending(trigger: String?) throws -> [String: OutboxRecord] {
        try store.onReader { connection in
            // The lowest id per trigger (the index on (trigger_name, id) gives each at once).
            let statement = try connection.statement("SELECT \(Self.columns) FROM trigger_outbox WHERE id IN"
                + " (SELECT min(id) FROM trigger_outbox WHERE ?1 IS NULL OR trigger_name = ?1 GROUP BY trigger_name)")
            try statement.reset([trigger.map { .text($0) } ?? .null])
            defer { try? statement.reset() }
            var oldest: [String: OutboxRecord] = [:]
            while try statement.step() {
                let record = Self.record(statement)
                oldest[record.trigger] = record
            }
            return oldest
        }
    }

    public func kill(id: Int64, reason: String, at: Int64) throws {
        try onWriterTransaction { connection in
            try connection.statement("INSERT OR REPLACE INTO trigger_dead(\(Self.columns), reason, died_at)"
                + " SELECT \(Self.columns), ?, ? FROM trigger_outbox WHERE id = ?").run([.text(reason), .integer(at), .integer(id)])
            try connection.statement("DELETE FROM trigger_outbox WHERE id = ?").run([.integer(id)])
        }
    }

    public func killNewest(trigger: String, keep: Int, reason: String, at: Int64) throws -> Int {
        try onWriterTransaction { connection in
            // The id of the last event kept; nothing moves when there are at most `keep`.
            let cut = try connection.statement("SELECT id FROM trigger_outbox WHERE trigger_name = ? ORDER BY id LIMIT 1 OFFSET ?")
            try cut.reset([.text(trigger), .integer(Int64(max(1, keep) - 1))])
            defer { try? cut.reset() }
            guard try cut.step() else { return 0 }
            let last = cut.int64(0)
            let before = connection.totalChanges
            try connection.statement("INSERT OR REPLACE INTO trigger_dead(\(Self.columns), reason, died_at)"
                + " SELECT \(Self.columns), ?, ? FROM trigger_outbox WHERE trigger_name = ? AND id > ?")
                .run([.text(reason), .integer(at), .text(trigger), .integer(last)])
            let moved = Int(connection.totalChanges - before)
            try connection.statement("DELETE FROM trigger_outbox WHERE trigger_name = ? AND id > ?").run([.text(trigger), .integer(last)])
            return moved
        }
    }

    public func deadLetters(trigger: String?, limit: Int) throws -> [DeadLetter] {
        try store.onReader { connection in
            let statement = try connection.statement("SELECT \(Self.columns), reason, died_at FROM trigger_dead"
                + " WHERE ?1 IS NULL OR trigger_name = ?1 ORDER BY id LIMIT ?2")
            try statement.reset([trigger.map { .text($0) } ?? .null, .integer(Int64(max(0, limit)))])
            defer { try? statement.reset() }
            var letters: [DeadLetter] = []
            while try statement.step() {
                letters.append(DeadLetter(record: Self.record(statement), reason: statement.text(8), diedAt: statement.int64(9)))
            }
            return letters
        }
    }

    public func resend(ids: [Int64]) throws -> Int {
        if ids.isEmpty { return 0 }
        return try onWriterTransaction { connection in
            let insert = try connection.statement("INSERT INTO trigger_outbox(\(Self.columns))"
                + " SELECT id, trigger_name, seq, at, payload, 0, NULL, 0 FROM trigger_dead WHERE id = ?")
            let delete = try connection.statement("DELETE FROM trigger_dead WHERE id = ?")
            var moved = 0
            for id in Set(ids) {
                try insert.run([.integer(id)])
                guard connection.changes > 0 else { continue }
                try delete.run([.integer(id)])
                moved += 1
            }
            return moved
        }
    }

    public func backlog() throws -> [String: (pending: Int, oldestAt: Int64?)] {
        try store.onReader { connection in
            let statement = try connection.statement("SELECT trigger_name, count(*), min(at) FROM trigger_outbox GROUP BY trigger_name")
            try statement.reset()
            defer { try? statement.reset() }
            var backlog: [String: (pending: Int, oldestAt: Int64?)] = [:]
            while try statement.step() { backlog[statement.text(0)] = (Int(statement.int64(1)), statement.int64(2)) }
            return backlog
        }
    }

    public func pendingCount(trigger: String) throws -> Int {
        try store.onReader { connection in
            let statement = try connection.statement("SELECT count(*) FROM trigger_outbox WHERE trigger_name = ?")
            try statement.reset([.text(trigger)])
            defer { try? statement.reset() }
            return try statement.step() ? Int(statement.int64(0)) : 0
        }
    }

    public func storedBytes(trigger: String?) throws -> [String: OutboxBytes] {
        try store.onReader { connection in
            // length() of a blob reads its size, not its content.
            let statement = try connection.statement("""
                SELECT trigger_name, sum(pending), sum(dead) FROM (
                    SELECT trigger_name, length(payload) AS pending, 0 AS dead FROM trigger_outbox WHERE ?1 IS NULL OR trigger_name = ?1
                    UNION ALL SELECT trigger_name, 0, length(payload) FROM trigger_dead WHERE ?1 IS NULL OR trigger_name = ?1)
                GROUP BY trigger_name
                """)
            try statement.reset([trigger.map { .text($0) } ?? .null])
            defer { try? statement.reset() }
            var bytes: [String: OutboxBytes] = [:]
            while try statement.step() { bytes[statement.text(0)] = OutboxBytes(pending: statement.int64(1), dead: statement.int64(2)) }
            return bytes
        }
    }

    public func trim(trigger: String, maxBytes: Int64) throws -> OutboxTrim {
        try onWriterTransaction { connection in
            var trim = OutboxTrim()
            // The newest pending events past the budget: from the first whose running total
            // (in id order) exceeds it.
            var before = connection.totalChanges
            try connection.statement("""
                DELETE FROM trigger_outbox WHERE trigger_name = ?1 AND id >= (SELECT min(id) FROM (
                    SELECT id, sum(length(payload)) OVER (ORDER BY id) AS running FROM trigger_outbox WHERE trigger_name = ?1)
                    WHERE running > ?2)
                """).run([.text(trigger), .integer(maxBytes)])
            trim.pendingDropped = Int(connection.totalChanges - before)
            // The oldest dead letters past what the pending events leave: up to the newest
            // whose running total (newest first) exceeds it.
            before = connection.totalChanges
            try connection.statement("""
                DELETE FROM trigger_dead WHERE trigger_name = ?1 AND id <= (SELECT max(id) FROM (
                    SELECT id, sum(length(payload)) OVER (ORDER BY id DESC) AS running FROM trigger_dead WHERE trigger_name = ?1)
                    WHERE running > ?2 - (SELECT coalesce(sum(length(payload)), 0) FROM trigger_outbox WHERE trigger_name = ?1))
                """).run([.text(trigger), .integer(maxBytes)])
            trim.deadRemoved = Int(connection.totalChanges - before)
            return trim
        }
    }

    public func pruneDeadLetters(diedBefore: Int64) throws -> [String: Int] {
        try store.onWriter { connection in
            let statement = try connection.statement("DELETE FROM trigger_dead WHERE died_at < ? RETURNING trigger_name")
            try statement.reset([.integer(diedBefore)])
            defer { try? statement.reset() }
            var removed: [String: Int] = [:]
            while try statement.step() { removed[statement.text(0), default: 0] += 1 }
            return removed
        }
    }

    public func recordDue(trigger: String, schedule: String, dueAt: Int64, payload: [UInt8]) throws -> Bool {
        // The writer's transaction serializes this with every other process's (BEGIN IMMEDIATE).
        try onWriterTransaction { connection in
            let mark = try connection.statement("SELECT schedule, last_due_at FROM trigger_schedules WHERE trigger_name = ?")
            try mark.reset([.text(trigger)])
            defer { try? mark.reset() }
            let found = try mark.step() ? (schedule: mark.text(0), lastDueAt: mark.int64(1)) : nil
            if let found, found.schedule == schedule, found.lastDueAt >= dueAt { return false }
            try connection.statement("INSERT OR REPLACE INTO trigger_schedules(trigger_name, schedule, last_due_at) VALUES (?, ?, ?)")
                .run([.text(trigger), .text(schedule), .integer(dueAt)])
            guard found?.schedule == schedule else { return false }  // new or changed: it fires from its next due time
            try connection.statement("INSERT INTO trigger_outbox(trigger_name, seq, at, payload) VALUES (?, 0, ?, ?)")
                .run([.text(trigger), .integer(dueAt), .blob(payload)])
            return true
        }
    }

    /// One process owns the file: it delivers every trigger.
    public func lease(trigger: String, seconds: Int) throws -> Bool { true }

    private static func record(_ statement: SQLiteStatement) -> OutboxRecord {
        OutboxRecord(id: statement.int64(0), trigger: statement.text(1), seq: statement.int64(2), at: statement.int64(3),
                     payload: statement.blob(4), attempts: Int(statement.int64(5)),
                     lastError: statement.columnType(6) == SQLITE_NULL ? nil : statement.text(6),
                     nextAttemptAt: statement.int64(7))
    }

    /// `body` on the writer, in one transaction.
    private func onWriterTransaction<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        try store.onWriter { connection in
            try connection.execute("BEGIN IMMEDIATE")
            var committed = false
            defer { if !committed { try? connection.execute("ROLLBACK") } }
            let result = try body(connection)
            try connection.execute("COMMIT")
            committed = true
            return result
        }
    }
}
