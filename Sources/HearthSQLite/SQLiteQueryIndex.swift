import HearthJSON
import HearthStore

/// The SQLite engine's query indexes: `query_index` rows (see `QueryIndex`).
extension QueryIndex {
    /// The ordered value of a child: rank and comparable value (docs/protocol/rest.md §1.3
    /// type order).
    static func sortKey(of child: JSONValue?) -> (rank: Int64, value: SQLiteValue) {
        guard let child else { return (0, .integer(0)) }
        let rank = Int64(QueryOrder.rank(child))
        switch child {
        case .int(let i): return (rank, .integer(i))
        case .double(let d): return (rank, .real(d))
        case .string(let s): return (rank, .text(s))
        default: return (rank, .integer(0))
        }
    }

    /// A bound as the index compares it.
    static func sortKey(ofBound bound: JSONValue) -> (rank: Int64, value: SQLiteValue) {
        // Written as a pattern match: `sortKey(of: bound == .null ? nil : bound)` crashes
        // the Swift 6.3.1 optimizer (SIL verifier, OwnershipModelEliminator) in release builds.
        if case .null = bound { return sortKey(of: nil) }
        return sortKey(of: bound)
    }

    /// The ordered value of `location/key` under `spec`, read on `view`; nil when the child
    /// does not exist.
    static func entry(_ view: SQLiteTreeView, location: DataPath, key: String, spec: String) throws(StoreError) -> (rank: Int64, value: SQLiteValue)? {
        let child = DataPath(uncheckedSegments: location.segments + [key])
        if spec == ".value" {
            if let leaf = try view.leaf(at: child) { return sortKey(of: leaf) }
            return try view.exists(at: child) ? (5, .integer(0)) : nil
        }
        let target = DataPath(uncheckedSegments: child.segments + spec.split(separator: "/").map(String.init))
        if let leaf = try view.leaf(at: target) { return sortKey(of: leaf) }
        if try view.exists(at: target) { return (5, .integer(0)) }
        return try view.exists(at: child) ? (0, .integer(0)) : nil
    }

    static let upsertSQL = "INSERT OR REPLACE INTO query_index(location, spec, rank, value, key_order, child_key) VALUES (?, ?, ?, ?, ?, ?)"
    static let deleteEntrySQL = "DELETE FROM query_index WHERE location = ? AND spec = ? AND child_key = ?"
}

/// The writer's side: which indexes exist, building them, keeping them in step.
/// Confined to the writer queue.
///
/// An index is built a slice of children at a time (`step`), each slice its own
/// transaction between write batches, so building the index of a large location holds the
/// writer for one slice at a time rather than for the whole location. From its first slice
/// on, writes keep the index in step as they keep a built one: a write into a child the
/// scan has not reached yet writes that child's row, which the scan later writes again
/// from the data as it then is. Queries use the index only once its last slice recorded
/// it in `query_index_built`.
final class QueryIndexMaintainer {
    /// Indexes kept in step with writes, built or being built: location storage key → specs.
    private(set) var maintained: [JSONKey: Set<String>] = [:]
    /// Builds under way: location storage key → spec → where the scan of its children stands.
    private var builds: [JSONKey: [String: TreeKeys.ChildKeyCursor]] = [:]
    private var maxDepth = -1

    init(connection: SQLiteConnection) throws(StoreError) {
        let stmt = try connection.statement("SELECT location, spec FROM query_index_built")
        try stmt.reset()
        defer { try? stmt.reset() }
        while try stmt.step() {
            add(stmt.text(0), stmt.text(1))
        }
    }

    private func add(_ location: String, _ spec: String) {
        maintained[location, default: []].insert(spec)
        maxDepth = max(maxDepth, location.isEmpty ? 0 : location.split(separator: "/", omittingEmptySubsequences: false).count)
    }

    func isBuilt(_ location: String, _ spec: String) -> Bool {
        (maintained[location]?.contains(spec) ?? false) && builds[location]?[spec] == nil
    }

    /// One slice of the build of the index of `location` by `spec`, in the caller's
    /// transaction: the rows of at most `children` more children. `start` begins the build
    /// when none is under way (the first slice): it clears rows an earlier, unfinished
    /// build left. Returns true when there is nothing more to do: the index is built (the
    /// last slice records it), or it was built already, or the build was given up (a
    /// write replaced the location, or a rolled-back transaction made the writer forget
    /// it) and `start` is false.
    func step(location: DataPath, spec: String, children: Int, start: Bool, connection: SQLiteConnection) throws(StoreError) -> Bool {
        let key = location.storageKey
        if isBuilt(key, spec) { return true }
        var cursor: TreeKeys.ChildKeyCursor
        if let under = builds[key]?[spec] {
            cursor = under
        } else {
            guard start else { return true }
            try connection.statement("DELETE FROM query_index WHERE location = ? AND spec = ?").run([.text(key), .text(spec)])
            cursor = TreeKeys.ChildKeyCursor(at: location)
            add(key, spec)
        }
        let view = SQLiteTreeView(connection: connection)
        let upsert = try connection.statement(QueryIndex.upsertSQL)
        for _ in 0..<max(1, children) {
            guard let child = try view.nextChild(&cursor) else {
                try connection.statement("INSERT INTO query_index_built(location, spec) VALUES (?, ?)").run([.text(key), .text(spec)])
                builds[key]?[spec] = nil
                if builds[key]?.isEmpty == true { builds[key] = nil }
                return true
            }
            guard let entry = try QueryIndex.entry(view, location: location, key: child, spec: spec) else { continue }
            try upsert.run([.text(key), .text(spec), .integer(entry.rank), entry.value, .text(QueryIndex.keyOrder(child)), .text(child)])
        }
        builds[key, default: [:]][spec] = cursor
        return false
    }

    /// Keeps the indexes in step with a write of `entry` that was just applied (same
    /// transaction): a write inside a child of an indexed location updates that child's row;
    /// a write at or above an indexed location drops its index, or gives up its build.
    func written(_ path: DataPath, connection: SQLiteConnection) throws(StoreError) {
        if maintained.isEmpty { return }
        let view = SQLiteTreeView(connection: connection)
        // Indexed locations above the write: update the child the write is in.
        var prefix: [String] = []
        for segment in path.segments {
            let key = prefix.joined(separator: "/")
            if let specs = maintained[key] {
                let location = DataPath(uncheckedSegments: prefix)
                for spec in specs {
                    if let entry = try QueryIndex.entry(view, location: location, key: segment, spec: spec) {
                        try connection.statement(QueryIndex.upsertSQL).run(
                            [.text(key), .text(spec), .integer(entry.rank), entry.value, .text(QueryIndex.keyOrder(segment)), .text(segment)])
                    } else {
                        try connection.statement(QueryIndex.deleteEntrySQL).run([.text(key), .text(spec), .text(segment)])
                    }
                }
            }
            prefix.append(segment)
        }
        // Indexed locations at or below the write: their children were replaced wholesale.
        guard path.count <= maxDepth else { return }
        let base = path.storageKey
        let below = base + "/"
        let dropped = maintained.keys.map(\.string).filter { location in
            path.isRoot || location.sameCodeUnits(as: base) || location.utf8.starts(with: below.utf8)
        }
        for location in dropped {
            try connection.statement("DELETE FROM query_index WHERE location = ?").run([.text(location)])
            try connection.statement("DELETE FROM query_index_built WHERE location = ?").run([.text(location)])
            maintained[location] = nil
            builds[location] = nil
        }
    }

    /// Forgets everything (after a rollback of the transaction that changed it, the
    /// in-memory copy is reloaded from the table). Builds under way are given up; the rows
    /// their slices committed stay until the next build of that index clears them.
    func reload(connection: SQLiteConnection) throws(StoreError) {
        maintained = [:]
        builds = [:]
        maxDepth = -1
        let fresh = try QueryIndexMaintainer(connection: connection)
        for (location, specs) in fresh.maintained {
            for spec in specs { add(location.string, spec) }
        }
    }
}

extension SQLiteTreeView {
    /// Runs `query` at `path` from the rows in key order when it can (`childrenInKeyOrder`),
    /// from its index when one is built, else in memory. `missing`
    /// hears of an index that would have served the query, so the store can build it.
    func indexedQuery(_ query: TreeQuery, at path: DataPath, missing: ((DataPath, String) -> Void)?) throws(StoreError) -> JSONValue {
        if let answer = try childrenInKeyOrder(query, at: path) { return answer }
        guard let spec = QueryIndex.spec(of: query.orderBy), query.limit != nil else {
            return query.apply(to: query.orderBy == .priority ? try exportValue(at: path) : try value(at: path))
        }
        let location = path.storageKey
        let builtStmt = try connection.statement("SELECT 1 FROM query_index_built WHERE location = ? AND spec = ?")
        try builtStmt.reset([.text(location), .text(spec)])
        let isBuilt = try builtStmt.step()
        try builtStmt.reset()
        guard isBuilt else {
            missing?(path, spec)
            return query.apply(to: try value(at: path))
        }
        var sql = "SELECT child_key FROM query_index WHERE location = ? AND spec = ?"
        var arguments: [SQLiteValue] = [.text(location), .text(spec)]
        for (bound, isStart) in [(query.start, true), (query.end, false)] {
            guard let bound else { continue }
            let sortKey = QueryIndex.sortKey(ofBound: bound.value)
            let op = isStart ? (bound.inclusive ? ">=" : ">") : (bound.inclusive ? "<=" : "<")
            if let key = bound.key {
                // Ties at the value by key: the index's key order column decides.
                sql += " AND (rank, value, key_order) \(op) (?, ?, ?)"
                arguments += [.integer(sortKey.rank), sortKey.value, .text(QueryIndex.keyOrder(key))]
            } else {
                sql += " AND (rank, value) \(op) (?, ?)"
                arguments += [.integer(sortKey.rank), sortKey.value]
            }
        }
        if let (clause, count) = QueryIndex.orderAndLimit(query.limit, columns: ["rank", "value", "key_order"], placeholder: "?") {
            sql += clause
            arguments.append(.integer(Int64(count)))
        }
        let stmt = try connection.statement(sql)
        try stmt.reset(arguments)
        defer { try? stmt.reset() }
        var keys: [String] = []
        while try stmt.step() { keys.append(stmt.text(0)) }
        if keys.isEmpty { return .null }
        var result: [JSONKey: JSONValue] = [:]
        for key in keys {
            result[key] = try value(at: DataPath(uncheckedSegments: path.segments + [key]))
        }
        return .object(result)
    }

    /// The plan SQLite chooses for an index query (for tests: it must search the index).
    func indexQueryPlan() throws(StoreError) -> [String] {
        let stmt = try connection.statement(
            "EXPLAIN QUERY PLAN SELECT child_key FROM query_index WHERE location = ? AND spec = ? AND (rank, value) >= (?, ?) ORDER BY rank DESC, value DESC, key_order DESC LIMIT 10")
        try stmt.reset([.text("a"), .text("b"), .integer(3), .integer(0)])
        defer { try? stmt.reset() }
        var lines: [String] = []
        while try stmt.step() { lines.append(stmt.text(3)) }
        return lines
    }
}
