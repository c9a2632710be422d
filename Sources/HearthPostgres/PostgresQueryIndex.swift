import HearthJSON
import HearthStore

/// Query indexes in the shared database (docs/protocol/rest.md §1.3 `.indexOn`; the SQLite
/// engine's `QueryIndex`): for a location and an order, one `query_index` row per child
/// with its ordered value, so `orderBy` + a limit reads a handful of rows.
///
/// Built lazily, as on SQLite: the first limited query on a location is answered from the
/// data and asks this node's writer to build the index (under the ordering lock, so no
/// write slips between the build's read and its commit). From then on every node's writer
/// keeps it in step in the write's own transaction. Which indexes exist is shared: a
/// build or a drop bumps `hearth_meta.index_version`, and each writer re-reads the list
/// when that changed, after taking the ordering lock (so it sees every build before it).
enum PostgresQueryIndex {
    /// The ordered value of a child as columns: rank, number (numeric text), string.
    static func sortKey(of child: JSONValue?) -> (rank: Int64, number: String, string: String) {
        guard let child else { return (0, "0", "") }
        let rank = Int64(QueryOrder.rank(child))
        switch child {
        case .int(let i): return (rank, String(i), "")
        case .double(let d): return (rank, PGArray.doubleText(d), "")
        case .string(let s): return (rank, "0", s)
        default: return (rank, "0", "")
        }
    }

    static func sortKey(ofBound bound: JSONValue) -> (rank: Int64, number: String, string: String) {
        if case .null = bound { return sortKey(of: nil) }
        return sortKey(of: bound)
    }

    /// The ordered value of `location/key` under `spec`; nil when the child does not exist.
    static func entry(_ view: any TreeView, location: DataPath, key: String, spec: String) throws(StoreError) -> (rank: Int64, number: String, string: String)? {
        let child = DataPath(uncheckedSegments: location.segments + [key])
        if spec == ".value" {
            if let leaf = try view.leaf(at: child) { return sortKey(of: leaf) }
            return try view.exists(at: child) ? (5, "0", "") : nil
        }
        let target = DataPath(uncheckedSegments: child.segments + spec.split(separator: "/").map(String.init))
        if let leaf = try view.leaf(at: target) { return sortKey(of: leaf) }
        if try view.exists(at: target) { return (5, "0", "") }
        return try view.exists(at: child) ? (0, "0", "") : nil
    }

    static let upsertSQL = """
        INSERT INTO query_index(location, spec, rank, num, str, key_order, child_key) VALUES ($1, $2, $3, $4::numeric, $5, $6, $7)
        ON CONFLICT (location, spec, child_key) DO UPDATE SET rank = excluded.rank, num = excluded.num, str = excluded.str, key_order = excluded.key_order
        """

    static func upsert(_ location: String, _ spec: String, key: String, _ entry: (rank: Int64, number: String, string: String),
                       connection: PGConnection) throws(StoreError) {
        _ = try connection.query(upsertSQL, [.text(location), .text(spec), .int(entry.rank), .text(entry.number), .text(entry.string),
                                             .text(QueryIndex.keyOrder(key)), .text(key)])
    }

    /// The rows of `keys`, children of `location` that exist in `view`'s snapshot (a build's
    /// slice), in two round trips: their leaves at the spec's path read at once, the rows
    /// written at once; plus a probe for each child with no leaf there.
    static func write(existing keys: [String], of location: DataPath, spec: String, view: PostgresTreeView) throws(StoreError) {
        guard !keys.isEmpty else { return }
        let specSegments = spec == ".value" ? [] : spec.split(separator: "/").map(String.init)
        let targets = keys.map { DataPath(uncheckedSegments: location.segments + [$0] + specSegments) }
        let leaves = try view.connection.query("SELECT path, \(PostgresTreeView.leafColumns) FROM nodes WHERE path = ANY($1::text[])",
                                               [.text(PGArray.literal(targets.map(\.storageKey)))])
        var found: [JSONKey: JSONValue] = [:]
        for row in 0..<leaves.rowCount { found[JSONKey(leaves.text(row, 0))] = try PostgresTreeView.decode(leaves, row: row, column: 1) }
        // Where there is no leaf: an object there (for `.value`, the child: it exists and is
        // no leaf), else nothing, ordered as null; asked for all of them in one statement.
        let noLeaf = targets.filter { found[JSONKey($0.storageKey)] == nil }.map(\.storageKey)
        var objects = Set<JSONKey>()
        if spec == ".value" {
            objects = Set(noLeaf.map { JSONKey($0) })
        } else if !noLeaf.isEmpty {
            for (path, exists) in zip(noLeaf, try existing(noLeaf, connection: view.connection)) where exists { objects.insert(JSONKey(path)) }
        }
        var columns: (ranks: [String], numbers: [String], strings: [String], orders: [String]) = ([], [], [], [])
        for (key, target) in zip(keys, targets) {
            let entry: (rank: Int64, number: String, string: String)
            if let leaf = found[JSONKey(target.storageKey)] {
                entry = sortKey(of: leaf)
            } else {
                entry = objects.contains(JSONKey(target.storageKey)) ? (5, "0", "") : (0, "0", "")
            }
            columns.ranks.append(String(entry.rank))
            columns.numbers.append(entry.number)
            columns.strings.append(entry.string)
            columns.orders.append(QueryIndex.keyOrder(key))
        }
        _ = try view.connection.query(upsertManySQL, [
            .text(location.storageKey), .text(spec), .text(PGArray.literal(columns.ranks)), .text(PGArray.literal(columns.numbers)),
            .text(PGArray.literal(columns.strings)), .text(PGArray.literal(columns.orders)), .text(PGArray.literal(keys)),
        ])
    }

    /// Whether each of `paths` holds a leaf or descendants, in one statement.
    static func existing(_ paths: [String], connection: PGConnection) throws(StoreError) -> [Bool] {
        var exists = [Bool](repeating: false, count: paths.count)
        guard !paths.isEmpty else { return exists }
        let found = try connection.query(existingSQL, [.text(PGArray.literal(paths))])
        for row in 0..<found.rowCount {
            let index = Int(found.int64(row, 0)) - 1
            guard exists.indices.contains(index) else { throw .corrupt("existing path \(index + 1) of \(paths.count)") }
            exists[index] = true
        }
        return exists
    }

    /// The positions (from 1) of the paths in `$1` that hold a leaf or descendants.
    static let existingSQL = """
        SELECT k.i FROM unnest($1::text[]) WITH ORDINALITY AS k(p, i)
        WHERE EXISTS (SELECT 1 FROM nodes WHERE path = k.p)
           OR EXISTS (SELECT 1 FROM nodes WHERE path >= k.p || '/' AND path < k.p || '0')
        """

    static let upsertManySQL = """
        INSERT INTO query_index(location, spec, rank, num, str, key_order, child_key)
        SELECT $1, $2, r, n::numeric, s, o, k FROM unnest($3::smallint[], $4::text[], $5::text[], $6::text[], $7::text[]) AS t(r, n, s, o, k)
        ON CONFLICT (location, spec, child_key) DO UPDATE SET rank = excluded.rank, num = excluded.num, str = excluded.str, key_order = excluded.key_order
        """

    /// The query answered from its index, or nil when the index is not built.
    static func query(_ query: TreeQuery, at path: DataPath, view: PostgresTreeView) throws(StoreError) -> JSONValue? {
        guard let spec = QueryIndex.spec(of: query.orderBy), query.limit != nil else { return nil }
        let location = path.storageKey
        let connection = view.connection
        guard try connection.query("SELECT 1 FROM query_index_built WHERE location = $1 AND spec = $2", [.text(location), .text(spec)]).rowCount > 0 else {
            return nil
        }
        var sql = "SELECT child_key FROM query_index WHERE location = $1 AND spec = $2"
        var arguments: [PGValue] = [.text(location), .text(spec)]
        for (bound, isStart) in [(query.start, true), (query.end, false)] {
            guard let bound else { continue }
            let key = sortKey(ofBound: bound.value)
            let op = isStart ? (bound.inclusive ? ">=" : ">") : (bound.inclusive ? "<=" : "<")
            let n = arguments.count
            if let tie = bound.key {
                sql += " AND (rank, num, str, key_order) \(op) ($\(n + 1)::smallint, $\(n + 2)::numeric, $\(n + 3)::text, $\(n + 4)::text)"
                arguments += [.int(key.rank), .text(key.number), .text(key.string), .text(QueryIndex.keyOrder(tie))]
            } else {
                sql += " AND (rank, num, str) \(op) ($\(n + 1)::smallint, $\(n + 2)::numeric, $\(n + 3)::text)"
                arguments += [.int(key.rank), .text(key.number), .text(key.string)]
            }
        }
        if let (clause, count) = QueryIndex.orderAndLimit(query.limit, columns: ["rank", "num", "str", "key_order"],
                                                          placeholder: "$\(arguments.count + 1)") {
            sql += clause
            arguments.append(.int(Int64(count)))
        }
        let rows = try connection.query(sql, arguments)
        if rows.rowCount == 0 { return .null }
        return .object(try view.childValues((0..<rows.rowCount).map { rows.text($0, 0) }, at: path))
    }
}

/// The writer's side: which indexes exist (shared, versioned), building them, keeping
/// them in step with writes. Confined to the engine's writer queue.
final class PostgresIndexMaintainer {
    /// Indexed locations (by code units: `é` and `e\u{301}` are two) → their specs.
    private var built: [JSONKey: Set<String>] = [:]
    private var maxDepth = -1
    private var version: Int64 = -1

    /// Re-reads the built indexes if another node (or a build here) changed them. Call
    /// inside the write transaction, after the ordering lock.
    func refresh(_ connection: PGConnection) throws(StoreError) {
        try refresh(connection, version: connection.query(Self.versionSQL))
    }

    /// The statement reading the shared version of the list of indexes.
    static let versionSQL = "SELECT value FROM hearth_meta WHERE key = 'index_version'"

    /// `refresh(_:)` with the version already read (`versionSQL`'s result, sent with other
    /// statements after the ordering lock): a round trip only when the list changed.
    func refresh(_ connection: PGConnection, version current: PGResult) throws(StoreError) {
        let now = current.rowCount > 0 ? current.int64(0, 0) : 0
        if now == version { return }
        built = [:]
        maxDepth = -1
        let rows = try connection.query("SELECT location, spec FROM query_index_built")
        for row in 0..<rows.rowCount { add(rows.text(row, 0), rows.text(row, 1)) }
        version = now
    }

    /// Forgets what it knew (after a rolled-back transaction): the next refresh re-reads.
    func invalidate() { version = -1 }

    /// When the list is known to have no index (as of the version last read), the statement
    /// that checks, after the ordering lock, that this is still so: it fails when the
    /// version changed since (another node built or dropped an index), so nothing sent after
    /// it in the same exchange runs. Nil when the list is unknown or has an index: then the
    /// writer reads the version inside the transaction (`refresh`) and keeps the indexes.
    func unchangedAndEmpty() -> PGConnection.Statement? {
        guard version >= 0, count == 0 else { return nil }
        return .init(sql: Self.unchangedSQL, params: [.int(version)])
    }

    /// Answers 0 when the version is `$1`; otherwise fails (a text that is not a number, cast
    /// to one), which ends the exchange: the server runs no statement after a failed one.
    static let unchangedSQL = """
        SELECT CAST(CASE WHEN coalesce((SELECT value FROM hearth_meta WHERE key = 'index_version'), 0) = $1::bigint
                         THEN '0' ELSE 'the list of query indexes changed' END AS bigint)
        """

    private func add(_ location: String, _ spec: String) {
        built[JSONKey(location), default: []].insert(spec)
        maxDepth = max(maxDepth, location.isEmpty ? 0 : location.split(separator: "/", omittingEmptySubsequences: false).count)
    }

    private func bump(_ connection: PGConnection) throws(StoreError) {
        version = try connection.query("UPDATE hearth_meta SET value = value + 1 WHERE key = 'index_version' RETURNING value").int64(0, 0)
    }

    var count: Int { built.values.reduce(0) { $0 + $1.count } }

    func isBuilt(_ location: DataPath, spec: String) -> Bool {
        built[JSONKey(location.storageKey)]?.contains(spec) ?? false
    }

    /// Records the index of `location` by `spec` as built (in the caller's transaction, which
    /// holds the ordering lock): from its commit on, every node's writer keeps it in step.
    func markBuilt(_ location: DataPath, spec: String, connection: PGConnection) throws(StoreError) {
        let key = location.storageKey
        _ = try connection.query("INSERT INTO query_index_built(location, spec) VALUES ($1, $2) ON CONFLICT DO NOTHING", [.text(key), .text(spec)])
        add(key, spec)
        try bump(connection)
    }

    /// Brings the row of `location/key` in the index by `spec` to the data `view` reads:
    /// written, or deleted when the child is gone.
    static func update(_ location: DataPath, spec: String, key: String, view: PostgresTreeView) throws(StoreError) {
        let connection = view.connection
        if let entry = try PostgresQueryIndex.entry(view, location: location, key: key, spec: spec) {
            try PostgresQueryIndex.upsert(location.storageKey, spec, key: key, entry, connection: connection)
        } else {
            _ = try connection.query("DELETE FROM query_index WHERE location = $1 AND spec = $2 AND child_key = $3",
                                     [.text(location.storageKey), .text(spec), .text(key)])
        }
    }

    /// `update` for many children of `location` in a few statements rather than a round
    /// trip or more each: the ones that exist are written as a build's slice writes its
    /// children, the rows of the rest deleted.
    static func update(_ location: DataPath, spec: String, keys: [String], view: PostgresTreeView) throws(StoreError) {
        guard !keys.isEmpty else { return }
        let paths = keys.map { DataPath(uncheckedSegments: location.segments + [$0]).storageKey }
        let exists = try PostgresQueryIndex.existing(paths, connection: view.connection)
        try PostgresQueryIndex.write(existing: keys.indices.filter { exists[$0] }.map { keys[$0] }, of: location, spec: spec, view: view)
        let gone = keys.indices.filter { !exists[$0] }.map { keys[$0] }
        if gone.isEmpty { return }
        _ = try view.connection.query("DELETE FROM query_index WHERE location = $1 AND spec = $2 AND child_key = ANY($3::text[])",
                                      [.text(location.storageKey), .text(spec), .text(PGArray.literal(gone))])
    }

    /// Keeps the indexes in step with a write at `path` just applied (same transaction).
    func written(_ path: DataPath, connection: PGConnection) throws(StoreError) {
        if built.isEmpty { return }
        let view = PostgresTreeView(connection: connection)
        var prefix: [String] = []
        for segment in path.segments {
            let key = prefix.joined(separator: "/")
            if let specs = built[JSONKey(key)] {
                let location = DataPath(uncheckedSegments: prefix)
                for spec in specs { try Self.update(location, spec: spec, key: segment, view: view) }
            }
            prefix.append(segment)
        }
        guard path.count <= maxDepth else { return }
        let base = path.storageKey
        let below = base + "/"
        let dropped = built.keys.map(\.string).filter { location in
            path.isRoot || location.utf8.elementsEqual(base.utf8) || location.utf8.starts(with: below.utf8)
        }
        if dropped.isEmpty { return }
        for location in dropped {
            _ = try connection.query("DELETE FROM query_index WHERE location = $1", [.text(location)])
            _ = try connection.query("DELETE FROM query_index_built WHERE location = $1", [.text(location)])
            built[JSONKey(location)] = nil
        }
        try bump(connection)
    }
}
