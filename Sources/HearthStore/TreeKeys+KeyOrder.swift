import HearthJSON

/// Key-order queries with a limit answered from the location's rows, a probe per child,
/// rather than from every child: a chat's last messages (`limitToLast(n)`), the page
/// before them (`endBefore(k)` + `limitToLast(n)`), a list's first page (`limitToFirst(n)`)
/// and the pages after it (`startAfter(k)` + `limitToFirst(n)`), in `orderBy="$key"`, or in
/// the SDKs' default priority order with no bounds when no child has a priority (then
/// every child ties at null: key order). Shared by the engines, whose tree rows are ordered
/// by path as bytes (SQLite's `BINARY`, PostgreSQL's `COLLATE "C"`).
///
/// Such queries need no `.indexOn`, so they had no index and read every child of the
/// location (64,000 children: 0.4–1.1 s per query or page, and again for each change of a
/// query stream with the limit). The path order of the rows differs from Firebase's key
/// order in three ways, and each is handled:
///
/// - Firebase puts keys that are 32-bit integers first, in numeric order. From the end
///   they are passed over (the last `n` are other keys whenever the location has that
///   many, else the whole read answers). From the start, with no start bound, every
///   integer key is collected first from the rows that can hold one (keys starting with a
///   digit, or `-` and a digit), jumping past runs that cannot (`2024-…`). A bound that is
///   itself an integer key leaves the query to the whole read.
/// - Among the other keys Firebase compares UTF-16 code units, the rows UTF-8 bytes: the
///   two agree unless a character at or above U+E000 decides, so a key or bound with one (a
///   byte at or above 0xEE) sends the query back to the whole read.
/// - A child's rows are ordered by its key followed by `/` when it is an object, so a key
///   that extends an object child's key with a byte below `/` (`a` and `a-b`) has rows
///   before that child's subtree. From the end, for each object child found, the keys
///   between its key and its key followed by `/` are collected too. From the start, an
///   object child whose key a found key (or the end bound) extends that way has its rows
///   later than where the walk stops, so each such prefix is probed. The candidates are
///   sorted in key order at the end.
extension TreeKeys {
    /// The largest limit answered from the rows; a larger limit reads the whole location.
    package static let maxInKeyOrder = 1_000
    /// Probes one answer may make, per child of its limit (integer keys passed over or
    /// collected, keys that extend an object child's, keys outside the bounds): past them
    /// the whole location is read.
    package static let keyOrderProbesPerChild = 4
    /// Probes one answer may make beyond `keyOrderProbesPerChild` per child, whatever its
    /// limit (a few integer keys before the last child do not send `limitToLast(1)` back).
    package static let keyOrderProbesBeyondLimit = 16

    /// A query the rows may answer: its limit, which end it is taken from, and its bounds
    /// (keys that are neither integer keys nor hold a byte at or above 0xEE).
    package struct KeyOrderWalk: Sendable, Equatable {
        package struct Bound: Sendable, Equatable {
            package var key: String
            package var inclusive: Bool
        }

        package var limit: Int
        /// `limitToLast`: the last `limit` keys within the bounds; else the first.
        package var fromTheEnd: Bool
        package var start: Bound?
        package var end: Bound?

        /// Whether a key that is not an integer key lies within the bounds.
        func admits(_ key: String) -> Bool {
            if let start {
                let c = FirebaseKeyOrder.compare(key, start.key)
                if c < 0 || (c == 0 && !start.inclusive) { return false }
            }
            return !isPastEnd(key)
        }

        func isPastEnd(_ key: String) -> Bool {
            guard let end else { return false }
            let c = FirebaseKeyOrder.compare(key, end.key)
            return c > 0 || (c == 0 && !end.inclusive)
        }
    }

    /// How `query` at `path` may be answered from the rows, or nil when it must be read
    /// from the whole location: a limit of at most `maxInKeyOrder`, by key with bounds that
    /// are string keys, or by priority with no bounds (the caller checks that no priority
    /// is stored below the location).
    package static func keyOrderWalk(_ query: TreeQuery, at path: DataPath) -> KeyOrderWalk? {
        guard !path.isRoot, let limit = query.limit else { return nil }
        let (n, fromTheEnd): (Int, Bool)
        switch limit {
        case .first(let count): (n, fromTheEnd) = (count, false)
        case .last(let count): (n, fromTheEnd) = (count, true)
        }
        guard n > 0, n <= maxInKeyOrder else { return nil }
        switch query.orderBy {
        case .key: break
        case .priority: guard query.start == nil, query.end == nil else { return nil }
        default: return nil
        }
        func bound(_ bound: TreeQuery.Bound?) -> KeyOrderWalk.Bound?? {
            guard let bound else { return .some(nil) }
            guard case .string(let key) = bound.value, FirebaseKeyOrder.int32Value(key) == nil,
                  !hasHighByte(key) else { return nil }
            return KeyOrderWalk.Bound(key: key, inclusive: bound.inclusive)
        }
        guard let start = bound(query.start), let end = bound(query.end) else { return nil }
        return KeyOrderWalk(limit: n, fromTheEnd: fromTheEnd, start: start, end: end)
    }

    /// The keys `walk` selects below `path`, in Firebase key order, or nil when the rows
    /// cannot tell them (see the type's notes; also past the probes). The engine's probes:
    /// `lastPath(lower, upper)`, the largest stored path >= `lower` and < `upper`;
    /// `firstPath(lower, inclusive, upper)`, the smallest >= (or >) `lower` and < `upper`.
    package static func childKeysInKeyOrder(
        _ walk: KeyOrderWalk, at path: DataPath,
        lastPath: (_ lower: String, _ upper: String) throws(StoreError) -> String?,
        firstPath: (_ lower: String, _ inclusive: Bool, _ upper: String) throws(StoreError) -> String?
    ) throws(StoreError) -> [String]? {
        var probes = Probes(left: walk.limit * keyOrderProbesPerChild + keyOrderProbesBeyondLimit)
        let rows = ChildRows(path)
        // Keys compared by code units (a `String` set would merge canonically equal keys).
        var found = Set<JSONKey>()
        var integers: [String] = []
        if walk.fromTheEnd {
            guard try rows.fromTheEnd(walk, into: &found, &probes, lastPath, firstPath) else { return nil }
        } else {
            if walk.start == nil {
                // Integer keys come first; with no start bound every one is within.
                guard let all = try rows.integerKeys(&probes, firstPath) else { return nil }
                integers = all
            }
            if integers.count < walk.limit {
                guard try rows.fromTheStart(walk, wanted: walk.limit - integers.count, into: &found, &probes, firstPath) else {
                    return nil
                }
            }
        }
        // Object children whose rows lie past where the walk stopped, though their keys
        // are within: the end bound and its prefixes (either walk), and the prefixes of
        // the keys found (from the start, which may stop early). A prefix counts where
        // the next byte is below '/'.
        var sources = walk.fromTheEnd ? [] : found.map(\.string)
        if let end = walk.end { sources.append(end.key) }
        var checked = Set<JSONKey>()
        for source in sources {
            let bytes = Array(source.utf8)
            guard !bytes.isEmpty else { continue }
            for i in 1...bytes.count where i == bytes.count || bytes[i] < UInt8(ascii: "/") {
                let prefix = String(decoding: bytes[..<i], as: UTF8.self)
                guard checked.insert(JSONKey(prefix)).inserted, !found.contains(JSONKey(prefix)),
                      FirebaseKeyOrder.int32Value(prefix) == nil, walk.admits(prefix) else { continue }
                guard probes.spend() else { return nil }
                if try firstPath(rows.prefix + prefix + "/", true, rows.prefix + prefix + "0") != nil { found.insert(JSONKey(prefix)) }
            }
        }
        let ordered = FirebaseKeyOrder.sorted(integers + found.map(\.string))
        return walk.fromTheEnd ? Array(ordered.suffix(walk.limit)) : Array(ordered.prefix(walk.limit))
    }

    static func hasHighByte(_ key: String) -> Bool {
        key.utf8.contains { $0 >= 0xEE }
    }

    /// The probes an answer has left.
    struct Probes {
        var left: Int
        mutating func spend() -> Bool {
            left -= 1
            return left >= 0
        }
    }

    /// The walks over one location's rows (forward ones with `ChildKeyCursor`): `prefix`
    /// is the location's path and `/`, `end` sorts after every row below it.
    struct ChildRows {
        let path: DataPath
        let prefix: String
        let end: String

        init(_ path: DataPath) {
            self.path = path
            prefix = path.storageKey + "/"
            end = path.storageKey + "0"  // keys never hold '/'
        }

        /// From the end of the range the bounds allow, down: the keys within until `walk`'s
        /// limit is reached, and those between each object child's key and its subtree.
        /// False when the rows cannot tell (a high byte, the probes spent, or too few keys
        /// with no start bound, when integer keys would be among the last).
        func fromTheEnd(
            _ walk: KeyOrderWalk, into found: inout Set<JSONKey>, _ probes: inout Probes,
            _ lastPath: (String, String) throws(StoreError) -> String?,
            _ firstPath: (String, Bool, String) throws(StoreError) -> String?
        ) throws(StoreError) -> Bool {
            let lower = prefix + (walk.start?.key ?? "")
            var upper = walk.end.map { prefix + $0.key + "0" } ?? end  // past the end bound's own subtree
            var objects: [String] = []
            while found.count < walk.limit {
                guard probes.spend() else { return false }
                guard let full = try lastPath(lower, upper) else {
                    if walk.start == nil { return false }
                    break  // every key within is found
                }
                let rest = full.utf8.dropFirst(prefix.utf8.count)
                let key: String
                if let slash = rest.firstIndex(of: UInt8(ascii: "/")) {
                    key = String(Substring(rest[..<slash]))
                    upper = prefix + key + "/"  // before this object child's subtree
                    objects.append(key)
                } else {
                    key = String(Substring(rest))
                    upper = full  // before this leaf child
                }
                guard !hasHighByte(key) else { return false }
                if FirebaseKeyOrder.int32Value(key) == nil, walk.admits(key) { found.insert(JSONKey(key)) }
            }
            for object in objects {
                // Keys `object` + a byte below '/' + …: after `object` in key order, their
                // rows before its subtree's.
                var cursor = ChildKeyCursor(at: path, from: object, before: object + "/")
                while true {
                    guard probes.spend() else { return false }
                    guard let key = try cursor.next(firstPath: { lower, inclusive, upper throws(StoreError) in try firstPath(lower, inclusive, upper ?? end) }) else { break }
                    guard !hasHighByte(key) else { return false }
                    if FirebaseKeyOrder.int32Value(key) == nil, walk.admits(key) { found.insert(JSONKey(key)) }
                }
            }
            return true
        }

        /// From the start bound (or the location's first row) up: keys that are not
        /// integer keys, within the bounds, until `wanted` are found, the rows run out, or a
        /// key past the end bound (the keys within after it are the end bound's prefixes,
        /// probed by the caller). False when the rows cannot tell.
        func fromTheStart(
            _ walk: KeyOrderWalk, wanted: Int, into found: inout Set<JSONKey>, _ probes: inout Probes,
            _ firstPath: (String, Bool, String) throws(StoreError) -> String?
        ) throws(StoreError) -> Bool {
            var cursor = ChildKeyCursor(at: path, from: walk.start?.key ?? "")
            while found.count < wanted {
                guard probes.spend() else { return false }
                guard let key = try cursor.next(firstPath: { lower, inclusive, upper throws(StoreError) in try firstPath(lower, inclusive, upper ?? end) }) else { break }
                guard !hasHighByte(key) else { return false }
                guard FirebaseKeyOrder.int32Value(key) == nil else { continue }
                if walk.isPastEnd(key) { break }
                if walk.admits(key) { found.insert(JSONKey(key)) }
            }
            return true
        }

        /// Every integer key below the location, from the rows that can hold one: keys
        /// starting with a digit, or with `-` and a digit. A run of keys that cannot be one
        /// (`2024-01-…`, eleven significant digits) is passed in one probe; nil past the
        /// probes.
        func integerKeys(
            _ probes: inout Probes, _ firstPath: (String, Bool, String) throws(StoreError) -> String?
        ) throws(StoreError) -> [String]? {
            var integers: [String] = []
            for (low, high) in [("0", ":"), ("-0", "-:")] {
                var cursor = ChildKeyCursor(at: path, from: low, before: high)
                while true {
                    guard probes.spend() else { return nil }
                    guard let key = try cursor.next(firstPath: { lower, inclusive, upper throws(StoreError) in try firstPath(lower, inclusive, upper ?? end) }) else { break }
                    if FirebaseKeyOrder.int32Value(key) != nil {
                        integers.append(key)
                    } else if let run = TreeKeys.nonIntegerRun(key) {
                        cursor.skip(to: run)
                    }
                }
            }
            return integers
        }
    }

    /// For a key that is not an integer key: the smallest string past every key that
    /// shares its shortest prefix no integer key can start with (`2024-` for `2024-01-01`,
    /// eleven significant digits, a ten-digit value past `Int32.max`), or nil when there is
    /// none or its last byte is not ASCII (the next string would not be UTF-8).
    static func nonIntegerRun(_ key: String) -> String? {
        var bytes = Array(key.utf8)
        var i = bytes.first == UInt8(ascii: "-") ? 1 : 0
        guard i < bytes.count else { return nil }
        var significant = 0
        var end: Int?
        while i < bytes.count {
            let digit = bytes[i] &- UInt8(ascii: "0")
            if digit >= 10 { end = i; break }
            if significant > 0 || digit != 0 { significant += 1 }
            if significant > 10 { end = i; break }
            i += 1
        }
        // All digits, at most ten significant: not an integer key only past Int32's range,
        // and so is every key extending it.
        let last = end ?? bytes.count - 1
        guard bytes[last] < 0x7F else { return nil }
        bytes.removeSubrange((last + 1)...)
        bytes[last] += 1
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// An engine's tree view whose rows are ordered by path as bytes: the probes the key-order
/// walk makes, and the answer it assembles from them.
package protocol KeyOrderedRows: TreeView {
    /// The largest stored path >= `lower` and < `upper`.
    func lastPath(from lower: String, before upper: String) throws(StoreError) -> String?
    /// The smallest stored path >= (or > when not `inclusive`) `lower` and < `upper`.
    func firstPath(after lower: String, inclusive: Bool, before upper: String?) throws(StoreError) -> String?
    /// Whether a priority is stored at a path >= `lower` and < `upper`.
    func hasPriority(from lower: String, before upper: String) throws(StoreError) -> Bool
    /// The probes for one walk: the smallest stored path >= (or >) a bound and < another
    /// (nil: unbounded), and the largest in a range. The default is `firstPath` and
    /// `lastPath`; an engine whose probes are round trips reads ahead (`ReadAheadProbes`).
    func walkProbes() -> (first: (String, Bool, String?) throws(StoreError) -> String?,
                          last: (String, String) throws(StoreError) -> String?)
    /// The values of the children `keys` of `path`, by key; a key with no value is left
    /// out. The default reads them one by one; an engine whose reads are round trips reads
    /// them together.
    func childValues(_ keys: [String], at path: DataPath) throws(StoreError) -> [JSONKey: JSONValue]
}

extension KeyOrderedRows {
    package func walkProbes() -> (first: (String, Bool, String?) throws(StoreError) -> String?,
                                  last: (String, String) throws(StoreError) -> String?) {
        ({ lower, inclusive, upper throws(StoreError) in try firstPath(after: lower, inclusive: inclusive, before: upper) },
         { lower, upper throws(StoreError) in try lastPath(from: lower, before: upper) })
    }

    package func childValues(_ keys: [String], at path: DataPath) throws(StoreError) -> [JSONKey: JSONValue] {
        var values: [JSONKey: JSONValue] = [:]
        for key in keys {
            let value = try value(at: DataPath(uncheckedSegments: path.segments + [key]))
            if value != .null { values[JSONKey(key)] = value }
        }
        return values
    }

    /// The answer to `query` at `path` from the rows (`TreeKeys.childKeysInKeyOrder`), or
    /// nil when it must be read from the whole location: another query, a priority below
    /// the location in priority order, or rows that cannot tell.
    package func childrenInKeyOrder(_ query: TreeQuery, at path: DataPath) throws(StoreError) -> JSONValue? {
        guard let walk = TreeKeys.keyOrderWalk(query, at: path) else { return nil }
        let range = TreeKeys.descendantRange(path.storageKey)
        // With no priority below the location every child ties at null: key order.
        if query.orderBy == .priority, try hasPriority(from: range.lower, before: range.upper) { return nil }
        let probes = walkProbes()
        let keys = try TreeKeys.childKeysInKeyOrder(
            walk, at: path,
            lastPath: { lower, upper throws(StoreError) in try probes.last(lower, upper) },
            firstPath: { lower, inclusive, upper throws(StoreError) in try probes.first(lower, inclusive, upper) })
        guard let keys else { return nil }
        if keys.isEmpty { return .null }
        return .object(try childValues(keys, at: path))
    }
}
