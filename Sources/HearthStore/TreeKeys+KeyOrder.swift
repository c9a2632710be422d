import HearthJSON

/// `limitToLast(n)` in key order without reading the whole location: the last `n`
/// children of a chat-like list (`orderBy="$key"`, or the SDKs' default priority order
/// when no child has a priority, as `query(ref, limitToLast(50))` sends). Shared by the
/// engines, whose tree rows are ordered by path as bytes (SQLite's `BINARY`, PostgreSQL's
/// `COLLATE "C"`).
///
/// Such a query needs no `.indexOn`, so it had no index and read every child of the
/// location (64,000 children: 0.4–1.1 s, and again for each change of a query stream
/// with the limit). The rows can be probed from their end instead, a probe per child. Two
/// things make the path order differ from Firebase's key order, and both are handled:
///
/// - Firebase puts keys that are 32-bit integers first, in numeric order: such keys are
///   passed over, since the last `n` of the order are the last `n` other keys whenever the
///   location has that many.
/// - Among the other keys Firebase compares UTF-16 code units, the rows UTF-8 bytes: the
///   two agree unless a character at or above U+E000 decides, so a key with one (a byte at
///   or above 0xEE) sends the query back to the whole read.
///
/// A child's rows are ordered by its key followed by `/` when it is an object, so a key
/// that extends an object child's key with a byte below `/` (`a` and `a-b`) has rows
/// before that child's subtree; for each object child found, the keys between its key and
/// its key followed by `/` are collected too, and the candidates are sorted in key order.
extension TreeKeys {
    /// The largest `n` answered from the end of the location; a larger limit reads the
    /// whole location.
    package static let maxLastInKeyOrder = 1_000
    /// Probes one answer may make, per child of its limit (integer keys passed over, keys
    /// that extend an object child's): past them the whole location is read.
    package static let keyOrderProbesPerChild = 4
    /// Probes one answer may make beyond `keyOrderProbesPerChild` per child, whatever its
    /// limit (a few integer keys before the last child do not send `limitToLast(1)` back).
    package static let keyOrderProbesBeyondLimit = 16

    /// The `n` of a query that may be answered from the end of its location: `limitToLast`
    /// of at most `maxLastInKeyOrder`, no bounds, by key or by priority (the caller checks
    /// that no priority is stored below the location); nil for any other query.
    package static func lastInKeyOrder(_ query: TreeQuery, at path: DataPath) -> Int? {
        guard !path.isRoot, case .last(let n)? = query.limit, n > 0, n <= maxLastInKeyOrder,
              query.start == nil, query.end == nil else { return nil }
        switch query.orderBy {
        case .key, .priority: return n
        default: return nil
        }
    }

    /// The keys of the last `n` children of `path` in Firebase key order, or nil when they
    /// cannot be told from the end of the rows (fewer than `n` keys that are not integers,
    /// a key with a character at or above U+E000, or too many probes). The engine's
    /// probes: `lastPath(lower, upper)`, the largest stored path >= `lower` and < `upper`;
    /// `firstPath(lower, inclusive, upper)`, the smallest >= (or >) `lower` and < `upper`.
    package static func lastChildKeysInKeyOrder(
        at path: DataPath, _ n: Int,
        lastPath: (_ lower: String, _ upper: String) throws(StoreError) -> String?,
        firstPath: (_ lower: String, _ inclusive: Bool, _ upper: String) throws(StoreError) -> String?
    ) throws(StoreError) -> [String]? {
        let prefix = path.storageKey + "/"
        var probes = n * keyOrderProbesPerChild + keyOrderProbesBeyondLimit
        // Keys compared by code units (a `String` set would merge canonically equal keys).
        var candidates = Set<JSONKey>()
        var objects: [String] = []
        var upper = path.storageKey + "0"  // past every descendant (keys never hold '/')
        while candidates.count < n {
            probes -= 1
            guard probes >= 0, let full = try lastPath(prefix, upper) else { return nil }
            let (key, isObject) = childKey(of: full, below: prefix)
            if isObject {
                upper = prefix + key + "/"  // before this child's subtree
                objects.append(key)
            } else {
                upper = full  // before this leaf child
            }
            guard !key.utf8.contains(where: { $0 >= 0xEE }) else { return nil }
            if FirebaseKeyOrder.int32Value(key) == nil { candidates.insert(JSONKey(key)) }
        }
        for object in objects {
            // Keys `object` + a byte below '/' + …: after `object` in key order, their rows
            // before its subtree's.
            var (lower, inclusive) = (prefix + object, false)
            let below = prefix + object + "/"
            while true {
                probes -= 1
                guard probes >= 0 else { return nil }
                guard let full = try firstPath(lower, inclusive, below) else { break }
                let (key, isObject) = childKey(of: full, below: prefix)
                (lower, inclusive) = isObject ? (prefix + key + "0", true) : (full, false)
                guard !key.utf8.contains(where: { $0 >= 0xEE }) else { return nil }
                if FirebaseKeyOrder.int32Value(key) == nil { candidates.insert(JSONKey(key)) }
            }
        }
        return candidates.sorted { FirebaseKeyOrder.less($0.string, $1.string) }.suffix(n).map(\.string)
    }

    /// The child key of a row's path below `prefix`, and whether the row is inside that
    /// child (an object) rather than the child itself (a leaf).
    private static func childKey(of full: String, below prefix: String) -> (key: String, isObject: Bool) {
        let rest = full.utf8.dropFirst(prefix.utf8.count)
        if let slash = rest.firstIndex(of: UInt8(ascii: "/")) { return (String(Substring(rest[..<slash])), true) }
        return (String(Substring(rest)), false)
    }
}
