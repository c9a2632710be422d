import HearthJSON
import HearthStore

/// `limitToLast(n)` in key order from the end of the location's rows
/// (`TreeKeys.lastChildKeysInKeyOrder`): PostgreSQL's probes, on `nodes.path`
/// (`COLLATE "C"`: byte order, as the shared walk needs).
extension PostgresTreeView {
    /// The answer to `query` at `path` from the last children in key order, or nil when it
    /// must be read from the whole location (another query, a priority below the location
    /// in priority order, or `TreeKeys.lastChildKeysInKeyOrder` could not tell).
    func lastChildrenInKeyOrder(_ query: TreeQuery, at path: DataPath) throws(StoreError) -> JSONValue? {
        guard let n = TreeKeys.lastInKeyOrder(query, at: path) else { return nil }
        let range = TreeKeys.descendantRange(path.storageKey)
        // With no priority below the location every child ties at null: key order.
        if query.orderBy == .priority,
           try connection.query("SELECT 1 FROM priorities WHERE path >= $1 AND path < $2 LIMIT 1",
                                [.text(range.lower), .text(range.upper)]).rowCount > 0 {
            return nil
        }
        let keys = try TreeKeys.lastChildKeysInKeyOrder(
            at: path, n,
            lastPath: { lower, upper throws(StoreError) in
                let result = try connection.query("SELECT path FROM nodes WHERE path >= $1 AND path < $2 ORDER BY path DESC LIMIT 1",
                                                  [.text(lower), .text(upper)])
                return result.rowCount > 0 ? result.text(0, 0) : nil
            },
            firstPath: { lower, inclusive, upper throws(StoreError) in
                let result = try connection.query("SELECT path FROM nodes WHERE path \(inclusive ? ">=" : ">") $1 AND path < $2 ORDER BY path LIMIT 1",
                                                  [.text(lower), .text(upper)])
                return result.rowCount > 0 ? result.text(0, 0) : nil
            })
        guard let keys else { return nil }
        var result: [JSONKey: JSONValue] = [:]
        for key in keys { result[JSONKey(key)] = try value(at: DataPath(uncheckedSegments: path.segments + [key])) }
        return .object(result)
    }
}
