import HearthJSON
import HearthStore

/// Key-order queries with a limit answered from the location's rows
/// (`TreeKeys.childKeysInKeyOrder`): PostgreSQL's probes, on `nodes.path` (`COLLATE "C"`:
/// byte order, as the shared walk needs).
extension PostgresTreeView: KeyOrderedRows {
    /// Each probe is a round trip: a walk's probes read ahead, a window of rows per read.
    func walkProbes() -> (first: (String, Bool, String?) throws(StoreError) -> String?,
                          last: (String, String) throws(StoreError) -> String?) {
        let probes = ReadAheadProbes()
        return ({ lower, inclusive, upper throws(StoreError) in
                    try probes.first(after: lower, inclusive: inclusive, before: upper) { lower, inclusive, upper, limit throws(StoreError) in
                        try firstPaths(after: lower, inclusive: inclusive, before: upper, limit: limit)
                    }
                },
                { lower, upper throws(StoreError) in
                    try probes.last(from: lower, before: upper) { lower, upper, limit throws(StoreError) in
                        try lastPaths(from: lower, before: upper, limit: limit)
                    }
                })
    }

    func lastPath(from lower: String, before upper: String) throws(StoreError) -> String? {
        try lastPaths(from: lower, before: upper, limit: 1).first
    }

    func lastPaths(from lower: String, before upper: String, limit: Int) throws(StoreError) -> [String] {
        let result = try connection.query("SELECT path FROM nodes WHERE path >= $1 AND path < $2 ORDER BY path DESC LIMIT $3",
                                          [.text(lower), .text(upper), .int(Int64(limit))])
        return (0..<result.rowCount).map { result.text($0, 0) }
    }

    func firstPath(after lower: String, inclusive: Bool, before upper: String?) throws(StoreError) -> String? {
        try firstPaths(after: lower, inclusive: inclusive, before: upper, limit: 1).first
    }

    func firstPaths(after lower: String, inclusive: Bool, before upper: String?, limit: Int) throws(StoreError) -> [String] {
        var sql = "SELECT path FROM nodes WHERE path \(inclusive ? ">=" : ">") $1"
        var arguments = [PGValue.text(lower)]
        if let upper {
            sql += " AND path < $2"
            arguments.append(.text(upper))
        }
        arguments.append(.int(Int64(limit)))
        let result = try connection.query(sql + " ORDER BY path LIMIT $\(arguments.count)", arguments)
        return (0..<result.rowCount).map { result.text($0, 0) }
    }

    func hasPriority(from lower: String, before upper: String) throws(StoreError) -> Bool {
        try connection.query("SELECT 1 FROM priorities WHERE path >= $1 AND path < $2 LIMIT 1",
                             [.text(lower), .text(upper)]).rowCount > 0
    }
}
