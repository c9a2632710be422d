import HearthJSON
import HearthStore

/// The wire protocol's onDisconnect queues in the tree store's database (migration 5):
/// writes on its single writer queue, each in its own transaction.
public struct SQLiteOnDisconnectStore: OnDisconnectRecords {
    let store: SQLiteTreeStore

    public init(store: SQLiteTreeStore) {
        self.store = store
    }

    public func add(_ record: OnDisconnectRecord) throws {
        try store.onWriter { connection in
            try connection.statement("INSERT INTO on_disconnect(session, position, operation, caller) VALUES (?, ?, ?, ?)")
                .run([.text(record.session), .integer(record.position), .text(record.operation), .text(record.caller)])
        }
    }

    /// Removes the session's records at `positions`.
    public func remove(session: String, positions: [Int64]) throws {
        if positions.isEmpty { return }
        try store.onWriter { connection in
            let statement = try connection.statement("DELETE FROM on_disconnect WHERE session = ? AND position = ?")
            for position in positions { try statement.run([.text(session), .integer(position)]) }
        }
    }

    public func removeAll(session: String) throws {
        try store.onWriter { connection in
            try connection.statement("DELETE FROM on_disconnect WHERE session = ?").run([.text(session)])
        }
    }

    /// Every record from the first session on, and after a given one, by session and
    /// position: `orphans` steps through them and stops at the end of its page, so SQLite
    /// reads no further (a range on the primary key is a seek).
    static let firstOrphansSQL = "SELECT session, position, operation, caller FROM on_disconnect ORDER BY session, position"
    static let nextOrphansSQL = "SELECT session, position, operation, caller FROM on_disconnect WHERE session > ? ORDER BY session, position"

    /// One server owns the file: every record left at start is an orphan.
    public func orphans(after: String?, bytes: Int) throws -> [OnDisconnectRecord] {
        try store.onReader { connection in
            let statement = try connection.statement(after == nil ? Self.firstOrphansSQL : Self.nextOrphansSQL)
            try statement.reset(after.map { [.text($0)] } ?? [])
            defer { try? statement.reset() }
            var records: [OnDisconnectRecord] = []
            var taken = 0
            while try statement.step() {
                let session = statement.text(0)
                if let last = records.last, last.session != session, taken >= bytes { break }
                let record = OnDisconnectRecord(session: session, position: statement.int64(1),
                                                operation: statement.text(2), caller: statement.text(3))
                taken += record.operation.utf8.count + record.caller.utf8.count
                records.append(record)
            }
            return records
        }
    }
}
