import HearthJSON
import HearthStore

/// `limitToLast(n)` in key order without reading the whole location: the last `n`
/// children of a chat-like list (`orderBy="$key"`, or the SDKs' default priority order
/// when no child has a priority, as `query(ref, limitToLast(50))` sends).
///
/// Such a query needs no `.indexOn`, so it had no index and read every child of the
/// location (64,000 children: 0.3–0.5 s for a GET, and again for each change of a query
/// stream with the limit). The `nodes` table is ordered by path, so the last children can
/// be found from its end, a probe per child. Two things make the path order differ from
/// Firebase's key order, and both are handled:
///
/// - Firebase puts keys that are 32-bit integers first, in numeric order: such keys are
///   skipped, since the last `n` of the order are the last `n` other keys whenever the
///   location has that many.
/// - Among the other keys Firebase compares UTF-16 code units, SQLite UTF-8 bytes: the two
///   agree unless a character at or above U+E000 decides, so a key with one (a byte at or
///   above 0xEE) sends the query back to the whole read.
///
/// A child's rows are ordered by its key followed by `/` when it is an object, so a key
/// that extends an object child's key with a byte below `/` (`a` and `a-b`) has rows
/// before that child's; for each object child found, the keys between its key and its
/// key followed by `/` are collected too, and the candidates are sorted in key order.
extension SQLiteTreeView {
    /// The largest `n` answered from the end of the location; a larger limit reads the
    /// whole location.
    static let maxLastInKeyOrder = 1_000
    /// Probes one answer may make, per child of its limit (integer keys passed over, keys
    /// that extend an object child's): past them the whole location is read.
    static let keyOrderProbesPerChild = 4

    static let lastInRangeSQL = "SELECT path FROM nodes WHERE path >= ? AND path < ? ORDER BY path DESC LIMIT 1"
    static let anyPriorityInRangeSQL = "SELECT 1 FROM priorities WHERE path >= ? AND path < ? LIMIT 1"

    /// The answer to `query` at `path` from the last children in key order, or nil when it
    /// must be read from the whole location (another order, bounds, another limit, a
    /// priority below the location, fewer than `n` keys that are not integers, a key with
    /// a character at or above U+E000, or too many probes).
    func lastChildrenInKeyOrder(_ query: TreeQuery, at path: DataPath) throws(StoreError) -> JSONValue? {
        guard !path.isRoot, case .last(let n)? = query.limit, n > 0, n <= Self.maxLastInKeyOrder,
              query.start == nil, query.end == nil else { return nil }
        let prefix = path.storageKey + "/"
        let end = path.storageKey + "0"  // past every descendant (keys never hold '/')
        switch query.orderBy {
        case .key: break
        case .priority:
            // With no priority below the location every child ties at null: key order.
            guard try !anyPriority(from: prefix, before: end) else { return nil }
        default: return nil
        }
        var probes = n * Self.keyOrderProbesPerChild + 16
        // Keys compared by code units (a `String` set would merge canonically equal keys).
        var candidates = Set<JSONKey>()
        var objects: [String] = []
        var upper = end
        while candidates.count < n {
            probes -= 1
            guard probes >= 0, let full = try lastPath(from: prefix, before: upper) else { return nil }
            let rest = full.utf8.dropFirst(prefix.utf8.count)
            let key: String
            if let slash = rest.firstIndex(of: UInt8(ascii: "/")) {
                key = String(Substring(rest[..<slash]))
                upper = prefix + key + "/"  // before this child's subtree
                objects.append(key)
            } else {
                key = String(Substring(rest))
                upper = full  // before this leaf child
            }
            guard !key.utf8.contains(where: { $0 >= 0xEE }) else { return nil }
            if FirebaseKeyOrder.int32Value(key) == nil { candidates.insert(JSONKey(key)) }
        }
        for object in objects {
            // Keys `object` + a byte below '/' + …: after `object` in key order, their rows
            // before its subtree's.
            var lower = prefix + object
            var inclusive = false
            let below = prefix + object + "/"
            while true {
                probes -= 1
                guard probes >= 0 else { return nil }
                guard let full = try firstPath(after: lower, inclusive: inclusive, before: below) else { break }
                let rest = full.utf8.dropFirst(prefix.utf8.count)
                let key: String
                if let slash = rest.firstIndex(of: UInt8(ascii: "/")) {
                    key = String(Substring(rest[..<slash]))
                    (lower, inclusive) = (prefix + key + "0", true)
                } else {
                    key = String(Substring(rest))
                    (lower, inclusive) = (full, false)
                }
                guard !key.utf8.contains(where: { $0 >= 0xEE }) else { return nil }
                if FirebaseKeyOrder.int32Value(key) == nil { candidates.insert(JSONKey(key)) }
            }
        }
        var result: [JSONKey: JSONValue] = [:]
        for key in candidates.sorted(by: { FirebaseKeyOrder.less($0.string, $1.string) }).suffix(n) {
            result[key] = try value(at: DataPath(uncheckedSegments: path.segments + [key.string]))
        }
        return .object(result)
    }

    /// The largest stored path >= `lower` and < `upper`.
    private func lastPath(from lower: String, before upper: String) throws(StoreError) -> String? {
        let stmt = try connection.statement(Self.lastInRangeSQL)
        try stmt.reset([.text(lower), .text(upper)])
        defer { try? stmt.reset() }
        return try stmt.step() ? stmt.text(0) : nil
    }

    /// Whether a priority is stored at a path >= `lower` and < `upper`.
    private func anyPriority(from lower: String, before upper: String) throws(StoreError) -> Bool {
        let stmt = try connection.statement(Self.anyPriorityInRangeSQL)
        try stmt.reset([.text(lower), .text(upper)])
        defer { try? stmt.reset() }
        return try stmt.step()
    }
}

extension SQLiteTreeStore {
    /// For tests: `query`'s answer at `path` from the last children in key order, read on a
    /// reader; nil when it needs the whole location.
    package func lastChildrenInKeyOrder(_ query: TreeQuery, at path: DataPath) throws -> JSONValue? {
        try readSync { view in try (view as? SQLiteTreeView)?.lastChildrenInKeyOrder(query, at: path) }
    }
}
