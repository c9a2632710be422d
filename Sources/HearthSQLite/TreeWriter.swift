import HearthJSON
import HearthStore

/// Applies writes to the tree on the writer connection. Runs only on the writer queue,
/// inside a transaction the caller opened.
struct TreeWriter {
    let connection: SQLiteConnection
    /// Whether the `priorities` table may hold rows. When false its deletes are skipped (a
    /// create then runs 2 statements fewer); the writer asks once per transaction
    /// (`prioritiesExist`), and `apply` sets it again when it stores one.
    private(set) var mayHavePriorities = true
    /// Ancestor keys whose `nodes` row was deleted and not written since: a later write
    /// below them needs no delete there (each create's ancestors' delete was
    /// ~4 % of the server's CPU). Rows this writer inserts leave the set; a rolled-back
    /// savepoint empties it (`forgetCleared`), since the rows it deleted are back. The store
    /// carries the set from one transaction to the next (`cleared`): while it is open its
    /// writer is the only one that changes `nodes` (imports and restores need the file to
    /// themselves), and it empties the set when a transaction rolls back. Keys are compared
    /// by code units (`JSONKey`): a `String` set takes `list/é` and `list/e\u{301}` for one
    /// key, and a leaf at the second was left in place below a write to it.
    private var clearedAncestors: Set<JSONKey>
    /// Keys `clearedAncestors` holds at most; it is emptied when full (its keys then are
    /// deleted again once, as without it).
    static let maxClearedAncestors = 10_000

    init(connection: SQLiteConnection, mayHavePriorities: Bool = true, clearedAncestors: Set<JSONKey> = []) {
        self.connection = connection
        self.mayHavePriorities = mayHavePriorities
        self.clearedAncestors = clearedAncestors
    }

    /// The ancestors known to hold no row, for the next transaction's writer.
    var cleared: Set<JSONKey> { clearedAncestors }

    /// Whether any node has a priority: asked once per write transaction, under its lock.
    static func prioritiesExist(_ connection: SQLiteConnection) throws(StoreError) -> Bool {
        try connection.scalarInt("SELECT EXISTS (SELECT 1 FROM priorities)") != 0
    }

    static let insertSQL = "INSERT INTO nodes(path, kind, value) VALUES (?, ?, ?)"
    /// Leaves one INSERT statement stores at most: a write's rows go in statements of this
    /// many (and one for the rest), not one statement per leaf (a create's 7
    /// leaves are one statement). 96 parameters, far below SQLite's limit (32,766).
    static let rowsPerInsert = 32
    /// Leaves a write's row array has room for before it grows (a favourite has 7).
    static let leavesReserved = 16
    /// The INSERT of `n` rows, at index `n` (1...`rowsPerInsert`).
    static let insertRowsSQL: [String] = (0...rowsPerInsert).map { count in
        "INSERT INTO nodes(path, kind, value) VALUES " + Array(repeating: "(?, ?, ?)", count: count).joined(separator: ", ")
    }
    static let deleteExactSQL = "DELETE FROM nodes WHERE path = ?"
    static let deleteRangeSQL = "DELETE FROM nodes WHERE path >= ? AND path < ?"
    static let deleteAllSQL = "DELETE FROM nodes"
    static let logSQL = "INSERT INTO changes(path, kind, data, at) VALUES (?, ?, ?, ?)"
    static let outboxSQL = "INSERT INTO trigger_outbox(trigger_name, seq, at, payload) VALUES (?, ?, ?, ?)"
    static let insertPrioritySQL = "INSERT OR REPLACE INTO priorities(path, kind, value) VALUES (?, ?, ?)"
    static let deletePriorityExactSQL = "DELETE FROM priorities WHERE path = ?"
    static let deletePriorityRangeSQL = "DELETE FROM priorities WHERE path >= ? AND path < ?"
    static let deleteAllPrioritiesSQL = "DELETE FROM priorities"
    /// `DELETE FROM nodes WHERE path IN (?, …)` with `n` parameters, at index `n`: a
    /// write's ancestors in one statement, not one each.
    static let deleteAncestorsSQL: [String] = (0...DataPath.maxDepth).map { count in
        "DELETE FROM nodes WHERE path IN (" + Array(repeating: "?", count: count).joined(separator: ", ") + ")"
    }

    /// Replaces whatever is at `entry.path` with `entry.value` (nil deletes).
    ///
    /// A node with no children does not exist (docs/protocol/rest.md §1.8), so deleting the
    /// last child of a parent needs no extra work: the parent had no row of its own.
    /// Writing below a leaf replaces that leaf, so leaves at ancestor paths are removed.
    ///
    /// `replacesRows` false says the caller counted no row at or below `entry.path` in this
    /// transaction (`SQLiteTreeStore.replacedRows`), so there is nothing there to delete.
    mutating func apply(_ entry: WriteEntry, replacesRows: Bool = true) throws(StoreError) {
        let path = entry.path
        let key = path.storageKey
        if path.isRoot {
            try connection.statement(Self.deleteAllSQL).run()
            try connection.statement(Self.deleteAllPrioritiesSQL).run()
        } else {
            // The range's two keys are built only when a delete needs them (a create with no
            // priorities stored needs neither).
            if replacesRows || mayHavePriorities {
                let range = SQLiteTreeView.descendantRange(key)
                if replacesRows {
                    try connection.statement(Self.deleteExactSQL).run([.text(key)])
                    try connection.statement(Self.deleteRangeSQL).run([.text(range.lower), .text(range.upper)])
                }
                // A replaced node loses its priority and its children's (docs/protocol/rest.md
                // §1.5: a set without a priority clears it).
                if mayHavePriorities {
                    try connection.statement(Self.deletePriorityExactSQL).run([.text(key)])
                    try connection.statement(Self.deletePriorityRangeSQL).run([.text(range.lower), .text(range.upper)])
                }
            }
            if entry.value != nil {
                // The ancestors' keys are the root's, "", and the key cut at each `/` (keys
                // never contain one), less those this transaction already cleared.
                var ancestors: [SQLiteValue] = []
                ancestors.reserveCapacity(path.count)
                if clearedAncestors.count + path.count > Self.maxClearedAncestors { clearedAncestors.removeAll() }
                if clearedAncestors.insert("").inserted { ancestors.append(.text("")) }
                for index in key.utf8.indices where key.utf8[index] == UInt8(ascii: "/") {
                    let ancestor = String(key[..<index])
                    if clearedAncestors.insert(JSONKey(ancestor)).inserted { ancestors.append(.text(ancestor)) }
                }
                if !ancestors.isEmpty {
                    try connection.statement(Self.deleteAncestorsSQL[ancestors.count]).run(ancestors)
                }
            }
        }
        guard let value = entry.value else { return }
        var rows: [LeafRow] = []
        // Room for a small object's leaves at once, not one allocation per doubling.
        rows.reserveCapacity(Self.leavesReserved)
        var priorities: [LeafRow] = []
        LeafRow.flatten(value, at: key, into: &rows, priorities: &priorities)
        if !clearedAncestors.isEmpty {
            for row in rows { clearedAncestors.remove(JSONKey(row.path)) }
        }
        var start = 0
        while start < rows.count {
            let end = min(start + Self.rowsPerInsert, rows.count)
            var values: [SQLiteValue] = []
            values.reserveCapacity(3 * (end - start))
            for row in rows[start..<end] {
                values.append(.text(row.path))
                values.append(.integer(row.kind.rawValue))
                values.append(row.sqliteValue)
            }
            try connection.statement(Self.insertRowsSQL[end - start]).run(values)
            start = end
        }
        if priorities.isEmpty { return }
        mayHavePriorities = true
        let insertPriority = try connection.statement(Self.insertPrioritySQL)
        for row in priorities {
            try insertPriority.run([.text(row.path), .integer(row.kind.rawValue), row.sqliteValue])
        }
    }

    /// Forgets which ancestors were cleared: after a savepoint rolled back, the rows its
    /// write deleted exist again.
    mutating func forgetCleared() {
        clearedAncestors.removeAll()
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
