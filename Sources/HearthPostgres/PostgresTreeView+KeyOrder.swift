import HearthJSON
import HearthStore

/// Key-order queries with a limit answered from the location's rows
/// (`TreeKeys.childKeysInKeyOrder`): PostgreSQL's probes, on `nodes.path` (`COLLATE "C"`:
/// byte order, as the shared walk needs).
extension PostgresTreeView: KeyOrderedRows {
    func lastPath(from lower: String, before upper: String) throws(StoreError) -> String? {
        let result = try connection.query("SELECT path FROM nodes WHERE path >= $1 AND path < $2 ORDER BY path DESC LIMIT 1",
                                          [.text(lower), .text(upper)])
        return result.rowCount > 0 ? result.text(0, 0) : nil
    }

    func firstPath(after lower: String, inclusive: Bool, before upper: String?) throws(StoreError) -> String? {
        var sql = "SELECT path FROM nodes WHERE path \(inclusive ? ">=" : ">") $1"
        var arguments = [PGValue.text(lower)]
        if let upper {
            sql += " AND path < $2"
            arguments.append(.text(upper))
        }
        let result = try connection.query(sql + " ORDER BY path LIMIT 1", arguments)
        return result.rowCount > 0 ? result.text(0, 0) : nil
    }

    func hasPriority(from lower: String, before upper: String) throws(StoreError) -> Bool {
        try connection.query("SELECT 1 FROM priorities WHERE path >= $1 AND path < $2 LIMIT 1",
                             [.text(lower), .text(upper)]).rowCount > 0
    }
}
