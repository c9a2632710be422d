import HearthJSON
import HearthStore

/// Key-order queries with a limit answered from the location's rows
/// (`TreeKeys.childKeysInKeyOrder`): the SQLite engine's probes, on `nodes.path` (`BINARY`:
/// byte order, as the shared walk needs).
extension SQLiteTreeView: KeyOrderedRows {
    static let lastInRangeSQL = "SELECT path FROM nodes WHERE path >= ? AND path < ? ORDER BY path DESC LIMIT 1"
    static let anyPriorityInRangeSQL = "SELECT 1 FROM priorities WHERE path >= ? AND path < ? LIMIT 1"

    func lastPath(from lower: String, before upper: String) throws(StoreError) -> String? {
        try firstRow(Self.lastInRangeSQL, lower, upper)
    }

    func hasPriority(from lower: String, before upper: String) throws(StoreError) -> Bool {
        try firstRow(Self.anyPriorityInRangeSQL, lower, upper) != nil
    }

    /// The first column, as text, of the first row `sql` gives for `lower` and `upper`, or
    /// nil when it gives none.
    private func firstRow(_ sql: String, _ lower: String, _ upper: String) throws(StoreError) -> String? {
        let stmt = try connection.statement(sql)
        try stmt.reset([.text(lower), .text(upper)])
        defer { try? stmt.reset() }
        return try stmt.step() ? stmt.text(0) : nil
    }
}

extension SQLiteTreeStore {
    /// For tests: `query`'s answer at `path` from the rows in key order, read on a reader;
    /// nil when it needs the whole location.
    package func childrenInKeyOrder(_ query: TreeQuery, at path: DataPath) throws -> JSONValue? {
        try readSync { view in try (view as? SQLiteTreeView)?.childrenInKeyOrder(query, at: path) }
    }
}
