import HearthJSON
import HearthStore

/// Applies writes to the tree on the writer connection. Runs only on the writer queue,
/// inside a transaction the caller opened.
struct TreeWriter {
    let connection: SQLiteConnection

    static let insertSQL = "INSERT INTO nodes(path, kind, value) VALUES (?, ?, ?)"
    static let deleteExactSQL = "DELETE FROM nodes WHERE path = ?"
    static let deleteRangeSQL = "DELETE FROM nodes WHERE path >= ? AND path < ?"
    static let deleteAllSQL = "DELETE FROM nodes"
    static let logSQL = "INSERT INTO changes(path, kind, data, at) VALUES (?, ?, ?, ?)"
    static let outboxSQL = "INSERT INTO trigger_outbox(trigger_name, seq, at, payload) VALUES (?, ?, ?, ?)"
    static let insertPrioritySQL = "INSERT OR REPLACE INTO priorities(path, kind, value) VALUES (?, ?, ?)"
    static let deletePriorityExactSQL = "DELETE FROM priorities WHERE path = ?"
    static let deletePriorityRangeSQL = "DELETE FROM priorities WHERE path >= ? AND path < ?"
    static let deleteAllPrioritiesSQL = "DELETE FROM priorities"

    /// Replaces whatever is at `entry.path` with `entry.value` (nil deletes).
    ///
    /// A node with no children does not exist (spec §1.8), so deleting the last child of
    /// a parent needs no extra work: the parent had no row of its own. Writing below a
    /// leaf replaces that leaf, so leaves at ancestor paths are removed.
    func apply(_ entry: WriteEntry) throws(StoreError) {
        let path = entry.path
        if path.isRoot {
            try connection.statement(Self.deleteAllSQL).run()
            try connection.statement(Self.deleteAllPrioritiesSQL).run()
        } else {
            let key = path.storageKey
            let range = SQLiteTreeView.descendantRange(key)
            try connection.statement(Self.deleteExactSQL).run([.text(key)])
            try connection.statement(Self.deleteRangeSQL).run([.text(range.lower), .text(range.upper)])
            // A replaced node loses its priority and its children's (spec §1.5: a set without
            // a priority clears it).
            try connection.statement(Self.deletePriorityExactSQL).run([.text(key)])
            try connection.statement(Self.deletePriorityRangeSQL).run([.text(range.lower), .text(range.upper)])
            if entry.value != nil {
                var ancestor = path
                while let parent = ancestor.parent {
                    ancestor = parent
                    try connection.statement(Self.deleteExactSQL).run([.text(ancestor.storageKey)])
                }
            }
        }
        guard let value = entry.value else { return }
        var rows: [LeafRow] = []
        var priorities: [LeafRow] = []
        LeafRow.flatten(value, at: path.storageKey, into: &rows, priorities: &priorities)
        let insert = try connection.statement(Self.insertSQL)
        for row in rows {
            try insert.run([.text(row.path), .integer(row.kind.rawValue), row.sqliteValue])
        }
        if priorities.isEmpty { return }
        let insertPriority = try connection.statement(Self.insertPrioritySQL)
        for row in priorities {
            try insertPriority.run([.text(row.path), .integer(row.kind.rawValue), row.sqliteValue])
        }
    }

    /// Appends the change record of `operation` and returns its sequence number.
    func log(_ operation: WriteOperation, at time: Int64) throws(StoreError) -> Change {
        let change = Change.record(of: operation, seq: 0, at: time)
        let json = String(decoding: JSONWriter.write(change.data), as: UTF8.self)
        try connection.statement(Self.logSQL).run(
            [.text(change.path.storageKey), .text(change.kind.rawValue), .text(json), .integer(time)])
        var logged = change
        logged.seq = sqlite3LastInsertRowID()
        return logged
    }

    /// Inserts the events of the write logged as `change` into the triggers' outbox, in
    /// order, with its seq and commit time (in the write's savepoint: they commit with it).
    func record(_ events: [OutboxEvent], of change: Change) throws(StoreError) {
        if events.isEmpty { return }
        let insert = try connection.statement(Self.outboxSQL)
        for event in events {
            try insert.run([.text(event.trigger), .integer(change.seq), .integer(change.at), .blob(event.payload)])
        }
    }

    private func sqlite3LastInsertRowID() -> Int64 {
        connection.lastInsertRowID
    }
}
