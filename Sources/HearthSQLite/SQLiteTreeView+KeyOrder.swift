import HearthJSON
import HearthStore

/// `limitToLast(n)` in key order from the end of the location's rows
/// (`TreeKeys.lastChildKeysInKeyOrder`): the SQLite engine's probes.
extension SQLiteTreeView {
    static let lastInRangeSQL = "SELECT path FROM nodes WHERE path >= ? AND path < ? ORDER BY path DESC LIMIT 1"
    static let anyPriorityInRangeSQL = "SELECT 1 FROM priorities WHERE path >= ? AND path < ? LIMIT 1"

    /// The answer to `query` at `path` from the last children in key order, or nil when it
    /// must be read from the whole location (another query, a priority below the location
    /// in priority order, or `TreeKeys.lastChildKeysInKeyOrder` could not tell).
    func lastChildrenInKeyOrder(_ query: TreeQuery, at path: DataPath) throws(StoreError) -> JSONValue? {
        guard let n = TreeKeys.lastInKeyOrder(query, at: path) else { return nil }
        let range = Self.descendantRange(path.storageKey)
        // With no priority below the location every child ties at null: key order.
        if query.orderBy == .priority, try firstRow(Self.anyPriorityInRangeSQL, range.lower, range.upper) != nil { return nil }
        let keys = try TreeKeys.lastChildKeysInKeyOrder(
            at: path, n,
            lastPath: { lower, upper throws(StoreError) in try firstRow(Self.lastInRangeSQL, lower, upper) },
            firstPath: { lower, inclusive, upper throws(StoreError) in try firstPath(after: lower, inclusive: inclusive, before: upper) })
        guard let keys else { return nil }
        var result: [JSONKey: JSONValue] = [:]
        for key in keys { result[JSONKey(key)] = try value(at: DataPath(uncheckedSegments: path.segments + [key])) }
        return .object(result)
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
    /// For tests: `query`'s answer at `path` from the last children in key order, read on a
    /// reader; nil when it needs the whole location.
    package func lastChildrenInKeyOrder(_ query: TreeQuery, at path: DataPath) throws -> JSONValue? {
        try readSync { view in try (view as? SQLiteTreeView)?.lastChildrenInKeyOrder(query, at: path) }
    }
}
