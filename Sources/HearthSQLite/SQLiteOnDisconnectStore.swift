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

    /// One server owns the file: every record left at start is an orphan.
    public func orphans() throws -> [OnDisconnectRecord] {
        try all()
    }

    /// Every record, by session and then registration order.
    public func all() throws -> [OnDisconnectRecord] {
        try store.onReader { connection in
            let statement = try connection.statement("SELECT session, position, operation, caller FROM on_disconnect ORDER BY session, position")
            try statement.reset()
            defer { try? statement.reset() }
            var records: [OnDisconnectRecord] = []
            while try statement.step() {
                records.append(OnDisconnectRecord(session: statement.text(0), position: statement.int64(1),
                                                  operation: statement.text(2), caller: statement.text(3)))
            }
            return records
        }
    }
}
