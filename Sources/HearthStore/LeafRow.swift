import HearthJSON

/// How a leaf's type is kept in the `nodes.kind` column, so numbers stay numbers and
/// booleans stay booleans (docs/design.md §4).
package enum LeafKind: Int64 {
    case string = 1
    case int = 2
    case double = 3
    case bool = 4
}

/// One stored leaf: its full storage path and its value.
package struct LeafRow {
    package var path: String
    package var value: JSONValue

    package init(path: String, value: JSONValue) {
        (self.path, self.value) = (path, value)
    }

    package var kind: LeafKind {
        switch value {
        case .string: return .string
        case .int: return .int
        case .double: return .double
        case .bool: return .bool
        case .null, .array, .object: preconditionFailure("not a leaf")
        }
    }

    /// The leaves of a normalised value written at `base` ("" for the root).
    /// Arrays are expected to be normalised away; if one slips through it is stored by index.
    /// Priorities (`.priority` members, `{".value": v, ".priority": p}` leaves) go to
    /// `priorities` instead, keyed by their node's path.
    package static func flatten(_ value: JSONValue, at base: String, into rows: inout [LeafRow], priorities: inout [LeafRow]) {
        switch value {
        case .null: return
        case .bool, .int, .double, .string:
            rows.append(LeafRow(path: base, value: value))
        case .object(let children):
            if let priority = children[".priority"] { priorities.append(LeafRow(path: base, value: priority)) }
            if let leaf = children[".value"] {
                rows.append(LeafRow(path: base, value: leaf))
                return
            }
            for (key, child) in children where key != ".priority" {
                flatten(child, at: joined(base, key.string), into: &rows, priorities: &priorities)
            }
        case .array(let items):
            for (i, child) in items.enumerated() {
                flatten(child, at: joined(base, String(i)), into: &rows, priorities: &priorities)
            }
        }
    }

    /// `base/key` (`key` alone at the root) in one allocation: `base + "/" + key` made two
    /// per leaf, on the writer.
    private static func joined(_ base: String, _ key: String) -> String {
        if base.isEmpty { return key }
        var path = ""
        path.reserveCapacity(base.utf8.count + 1 + key.utf8.count)
        path += base
        path += "/"
        path += key
        return path
    }

    /// The `/`-separated segments of a stored path, split on UTF-8 bytes: `Substring.split`
    /// works in grapheme clusters, which made it a third of a subtree read's CPU. Keys never
    /// contain `/`, so a byte split is exact.
    package static func segments(_ path: Substring.UTF8View) -> ArraySlice<Substring> {
        var segments: [Substring] = []
        var start = path.startIndex
        var index = start
        while index < path.endIndex {
            if path[index] == UInt8(ascii: "/") {
                segments.append(Substring(path[start..<index]))
                start = path.index(after: index)
            }
            index = path.index(after: index)
        }
        segments.append(Substring(path[start..<path.endIndex]))
        return segments[...]
    }

    /// Rebuilds the value from leaves given as (relative segments, value), sorted by path
    /// bytes. Rows sharing a first segment are contiguous in that order (a shared prefix
    /// sorts together), which the grouping relies on.
    package static func assemble(_ rows: [(segments: ArraySlice<Substring>, value: JSONValue)]) -> JSONValue {
        if rows.isEmpty { return .null }
        return assemble(rows[...], depth: 0)
    }

    private static func assemble(
        _ rows: ArraySlice<(segments: ArraySlice<Substring>, value: JSONValue)>, depth: Int
    ) -> JSONValue {
        if rows.count == 1, let only = rows.first, only.segments.count == depth {
            return only.value
        }
        var object: [JSONKey: JSONValue] = [:]
        var start = rows.startIndex
        while start < rows.endIndex {
            guard rows[start].segments.count > depth else {
                // A leaf and a subtree at one path cannot both exist; skip the stray leaf.
                start += 1
                continue
            }
            let key = rows[start].segments[rows[start].segments.startIndex + depth]
            var end = start + 1
            while end < rows.endIndex,
                  rows[end].segments.count > depth,
                  rows[end].segments[rows[end].segments.startIndex + depth].utf8.elementsEqual(key.utf8) {
                end += 1
            }
            object[String(key)] = assemble(rows[start..<end], depth: depth + 1)
            start = end
        }
        return .object(object)
    }
}

/// Storage keys of the tree's rows, shared by the engines: a path's segments joined by
/// '/', '' for the root (docs/design.md §4).
package enum TreeKeys {
    /// The half-open key range holding every descendant of `key` (keys never contain '/',
    /// and '0' is the byte after '/').
    package static func descendantRange(_ key: String) -> (lower: String, upper: String) {
        (key + "/", key + "0")
    }

    /// The keys of the children of `path`, by skip-scan: one probe per child instead of
    /// reading the whole subtree. `firstPath(lower, inclusive, upper)` is the engine's
    /// probe: the smallest stored path >= (or >) `lower` and < `upper` (unbounded: nil).
    package static func childKeys(
        at path: DataPath, firstPath: (_ lower: String, _ inclusive: Bool, _ upper: String?) throws(StoreError) -> String?
    ) throws(StoreError) -> [String] {
        var cursor = ChildKeyCursor(at: path)
        var keys: [String] = []
        while let key = try cursor.next(firstPath: firstPath) { keys.append(key) }
        return keys
    }

    /// Where a skip-scan of a node's children stands: each `next` is one probe from the
    /// path after the last child found. The scan can be taken up again after the data
    /// changed (the SQLite engine builds a query index a slice of children at a time,
    /// between write batches): it then finds each child whose rows lie past that path, as
    /// they are at that moment.
    package struct ChildKeyCursor: Sendable {
        private let prefix: String
        private let upper: String?
        private let isRoot: Bool
        private var lower: String
        private var inclusive = true
        private var done = false

        package init(at path: DataPath) {
            isRoot = path.isRoot
            prefix = path.isRoot ? "" : path.storageKey + "/"
            upper = path.isRoot ? nil : path.storageKey + "0"
            lower = prefix
        }

        /// A scan of the children of `path` (not the root) whose rows lie at or after
        /// those of the key `start` and before those of `end` (nil: to the last child);
        /// the key-order walk scans ranges of a location's keys this way.
        package init(at path: DataPath, from start: String, before end: String? = nil) {
            let prefix = path.storageKey + "/"
            isRoot = false
            self.prefix = prefix
            upper = end.map { prefix + $0 } ?? path.storageKey + "0"
            lower = prefix + start
        }

        /// Takes the scan up at the rows of the key `start` and after.
        package mutating func skip(to start: String) {
            lower = prefix + start
            inclusive = true
        }

        /// The next child's key, or nil when there is none past the last one found.
        package mutating func next(
            firstPath: (_ lower: String, _ inclusive: Bool, _ upper: String?) throws(StoreError) -> String?
        ) throws(StoreError) -> String? {
            guard !done, let full = try firstPath(lower, inclusive, upper), !(isRoot && full.isEmpty) else {
                // Nothing left; or the root itself is a leaf: no children.
                done = true
                return nil
            }
            let rest = full.utf8.dropFirst(prefix.utf8.count)
            if let slash = rest.firstIndex(of: UInt8(ascii: "/")) {
                let key = String(Substring(rest[..<slash]))
                lower = prefix + key + "0"  // past every row of this child's subtree
                inclusive = true
                return key
            }
            lower = full  // past this leaf child
            inclusive = false
            return String(Substring(rest))
        }
    }

    /// `value` with `priority` laid over the node at the relative `path` (`format=export`:
    /// an object gains `.priority`, a leaf becomes `{".value": v, ".priority": p}`).
    package static func attach(_ priority: JSONValue, at path: ArraySlice<String>, in value: JSONValue) -> JSONValue {
        guard let key = path.first else {
            switch value {
            case .object(var members):
                members[".priority"] = priority
                return .object(members)
            case .null: return .null  // a stale row: the node is gone
            default: return .object([".value": value, ".priority": priority])
            }
        }
        guard case .object(var members) = value, let child = members[key] else { return value }
        members[key] = attach(priority, at: path.dropFirst(), in: child)
        return .object(members)
    }
}
