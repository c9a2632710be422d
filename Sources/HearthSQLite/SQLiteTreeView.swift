import HearthJSON
import HearthStore

/// `TreeView` over one connection. Used by readers (inside a read transaction) and by the
/// writer (inside the write transaction, so it sees the batch's earlier writes).
struct SQLiteTreeView: TreeView {
    let connection: SQLiteConnection
    /// Hears of a query an index would have served (readers pass the store's request to
    /// build it; the writer's view passes nothing).
    var onMissingIndex: ((DataPath, String) -> Void)? = nil

    func query(_ query: TreeQuery, at path: DataPath) throws(StoreError) -> JSONValue {
        try indexedQuery(query, at: path, missing: onMissingIndex)
    }

    static let leafSQL = "SELECT kind, value FROM nodes WHERE path = ?"
    static let rangeSQL = "SELECT path, kind, value FROM nodes WHERE path >= ? AND path < ? ORDER BY path"
    static let allSQL = "SELECT path, kind, value FROM nodes ORDER BY path"
    static let firstInRangeSQL = "SELECT path FROM nodes WHERE path >= ? AND path < ? ORDER BY path LIMIT 1"
    static let anyRowSQL = "SELECT 1 FROM nodes LIMIT 1"

    /// The half-open key range holding every descendant of `key` (keys never contain '/',
    /// and '0' is the byte after '/', docs/design.md §4).
    package static func descendantRange(_ key: String) -> (lower: String, upper: String) {
        TreeKeys.descendantRange(key)
    }

    static let prioritiesSQL = "SELECT path, kind, value FROM priorities WHERE path = ? OR (path >= ? AND path < ?)"
    static let allPrioritiesSQL = "SELECT path, kind, value FROM priorities"

    /// The value with its priorities laid over it (`format=export`).
    func exportValue(at path: DataPath) throws(StoreError) -> JSONValue {
        var value = try value(at: path)
        let stmt: SQLiteStatement
        let prefix: Int
        if path.isRoot {
            stmt = try connection.statement(Self.allPrioritiesSQL)
            try stmt.reset()
            prefix = 0
        } else {
            let key = path.storageKey
            let range = Self.descendantRange(key)
            stmt = try connection.statement(Self.prioritiesSQL)
            try stmt.reset([.text(key), .text(range.lower), .text(range.upper)])
            prefix = key.utf8.count
        }
        defer { try? stmt.reset() }
        while try stmt.step() {
            let full = stmt.text(0)
            let relative = full.utf8.count > prefix ? LeafRow.segments(full.utf8.dropFirst(prefix + (prefix == 0 ? 0 : 1))) : []
            let priority = try LeafRow.decode(kind: stmt.int64(1), statement: stmt, column: 2)
            value = TreeKeys.attach(priority, at: relative.map(String.init)[...], in: value)
        }
        return value
    }


    func lastChangeSeq() throws(StoreError) -> Int64 {
        try ChangeLogReader(connection: connection).lastSeq()
    }

    func changes(after seq: Int64, limit: Int) throws(StoreError) -> (changes: [Change], oldestSeq: Int64?) {
        try ChangeLogReader(connection: connection).changes(after: seq, limit: limit)
    }

    func changes(after seq: Int64, limit: Int, touching location: DataPath, maxBytes: Int) throws(StoreError) -> ChangeScan {
        try ChangeLogReader(connection: connection).scan(after: seq, limit: limit, touching: location, maxBytes: maxBytes)
    }

    func leaf(at path: DataPath) throws(StoreError) -> JSONValue? {
        let stmt = try connection.statement(Self.leafSQL)
        try stmt.reset([.text(path.storageKey)])
        defer { try? stmt.reset() }
        guard try stmt.step() else { return nil }
        return try LeafRow.decode(kind: stmt.int64(0), statement: stmt, column: 1)
    }

    func value(at path: DataPath) throws(StoreError) -> JSONValue {
        if let leaf = try leaf(at: path) { return leaf }
        let (stmt, prefixLength) = try subtreeScan(path)
        defer { try? stmt.reset() }
        var rows: [(segments: ArraySlice<Substring>, value: JSONValue)] = []
        while try stmt.step() {
            let full = stmt.text(0)
            let relative = full.utf8.dropFirst(prefixLength)
            rows.append((LeafRow.segments(relative), try LeafRow.decode(kind: stmt.int64(1), statement: stmt, column: 2)))
        }
        return LeafRow.assemble(rows)
    }

    /// The statement stepping through every leaf below `path` in path order (reset by the
    /// caller when done), and the length of the prefix that makes their paths relative.
    private func subtreeScan(_ path: DataPath) throws(StoreError) -> (SQLiteStatement, Int) {
        if path.isRoot {
            let stmt = try connection.statement(Self.allSQL)
            try stmt.reset()
            return (stmt, 0)
        }
        let range = Self.descendantRange(path.storageKey)
        let stmt = try connection.statement(Self.rangeSQL)
        try stmt.reset([.text(range.lower), .text(range.upper)])
        return (stmt, range.lower.utf8.count)
    }

    /// `value(at:)` written straight to JSON from the sorted rows (`SortedLeafRenderer`):
    /// no strings, segment arrays or dictionaries per leaf.
    func renderedValue(at path: DataPath) throws(StoreError) -> [UInt8] {
        if let leaf = try leaf(at: path) { return JSONWriter.write(leaf) }
        let (stmt, prefixLength) = try subtreeScan(path)
        defer { try? stmt.reset() }
        var renderer = SortedLeafRenderer()
        while try stmt.step() {
            let raw = stmt.int64(1)
            guard let kind = LeafKind(rawValue: raw) else { throw .corrupt("unknown leaf kind \(raw)") }
            stmt.withText(0) { full in
                let relative = UnsafeBufferPointer(rebasing: full[min(prefixLength, full.count)...])
                switch kind {
                case .string: stmt.withText(2) { renderer.append(path: relative, leaf: .string($0)) }
                case .int: renderer.append(path: relative, leaf: .int(stmt.int64(2)))
                case .double: renderer.append(path: relative, leaf: .double(stmt.double(2)))
                case .bool: renderer.append(path: relative, leaf: .bool(stmt.int64(2) != 0))
                }
            }
        }
        return renderer.render()
    }

    func leafRows(at path: DataPath, after: String?, limit: Int) throws(StoreError) -> [(path: String, value: JSONValue)] {
        if after == nil, let leaf = try leaf(at: path) { return [(path.storageKey, leaf)] }
        let range = path.isRoot ? (lower: "", upper: nil) : Self.descendantRange(path.storageKey)
        let stmt: SQLiteStatement
        if let upper = range.upper {
            stmt = try connection.statement("SELECT path, kind, value FROM nodes WHERE path > ? AND path < ? ORDER BY path LIMIT ?")
            try stmt.reset([.text(after ?? range.lower), .text(upper), .integer(Int64(limit))])
        } else {
            stmt = try connection.statement("SELECT path, kind, value FROM nodes WHERE path > ? ORDER BY path LIMIT ?")
            try stmt.reset([.text(after ?? range.lower), .integer(Int64(limit))])
        }
        defer { try? stmt.reset() }
        var rows: [(path: String, value: JSONValue)] = []
        while try stmt.step() { rows.append((stmt.text(0), try LeafRow.decode(kind: stmt.int64(1), statement: stmt, column: 2))) }
        return rows
    }

    func priority(at path: DataPath) throws(StoreError) -> JSONValue? {
        let stmt = try connection.statement("SELECT kind, value FROM priorities WHERE path = ?")
        try stmt.reset([.text(path.storageKey)])
        defer { try? stmt.reset() }
        guard try stmt.step() else { return nil }
        return try LeafRow.decode(kind: stmt.int64(0), statement: stmt, column: 1)
    }

    /// Skip-scan: one indexed probe per child instead of reading the whole subtree.
    func childKeys(at path: DataPath) throws(StoreError) -> [String] {
        try TreeKeys.childKeys(at: path) { lower, inclusive, upper throws(StoreError) in
            try firstPath(after: lower, inclusive: inclusive, before: upper)
        }
    }

    /// The next child `cursor` finds (one probe), or nil when none is left.
    func nextChild(_ cursor: inout TreeKeys.ChildKeyCursor) throws(StoreError) -> String? {
        try cursor.next { lower, inclusive, upper throws(StoreError) in
            try firstPath(after: lower, inclusive: inclusive, before: upper)
        }
    }

    /// The smallest stored path >= (or >) `lower` and < `upper` (unbounded when nil).
    func firstPath(after lower: String, inclusive: Bool, before upper: String?) throws(StoreError) -> String? {
        let op = inclusive ? ">=" : ">"
        let sql = upper == nil
            ? "SELECT path FROM nodes WHERE path \(op) ? ORDER BY path LIMIT 1"
            : "SELECT path FROM nodes WHERE path \(op) ? AND path < ? ORDER BY path LIMIT 1"
        let stmt = try connection.statement(sql)
        try stmt.reset(upper.map { [.text(lower), .text($0)] } ?? [.text(lower)])
        defer { try? stmt.reset() }
        return try stmt.step() ? stmt.text(0) : nil
    }

    func exists(at path: DataPath) throws(StoreError) -> Bool {
        if path.isRoot {
            return try connection.scalarInt(Self.anyRowSQL) != nil
        }
        if try leaf(at: path) != nil { return true }
        let range = Self.descendantRange(path.storageKey)
        let stmt = try connection.statement(Self.firstInRangeSQL)
        try stmt.reset([.text(range.lower), .text(range.upper)])
        defer { try? stmt.reset() }
        return try stmt.step()
    }
}
