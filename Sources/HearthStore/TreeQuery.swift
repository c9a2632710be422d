import HearthJSON

/// A query over a node's children (docs/protocol/rest.md §1.3): an order, optional bounds
/// on the ordered value, and an optional limit. Order of evaluation: sort, bound, then
/// limit. The result is the selected children as an object (REST results have no defined
/// order; clients re-sort), or null when none is selected.
public struct TreeQuery: Sendable, Hashable {
    public enum OrderBy: Sendable, Hashable {
        case key
        case value
        case priority
        /// A child path under each child (`orderBy="address/city"`).
        case child(DataPath)
    }

    public struct Bound: Sendable, Hashable {
        public var value: JSONValue
        public var inclusive: Bool
        /// The tie-break among children exactly at `value` (the SDKs' `startAt(value, key)`,
        /// docs/protocol/rest.md §1.3: ties are ordered by key): a start takes them from
        /// this key on, an end up to it, in Firebase key order, the key itself when
        /// `inclusive`. nil: all of them or none, as `inclusive` says.
        public var key: String?

        public init(_ value: JSONValue, inclusive: Bool, key: String? = nil) {
            self.value = value
            self.inclusive = inclusive
            self.key = key
        }
    }

    public enum Limit: Sendable, Hashable {
        case first(Int)
        case last(Int)
    }

    public var orderBy: OrderBy
    public var start: Bound?
    public var end: Bound?
    public var limit: Limit?

    public init(orderBy: OrderBy, start: Bound? = nil, end: Bound? = nil, limit: Limit? = nil) {
        self.orderBy = orderBy
        self.start = start
        self.end = end
        self.limit = limit
    }

    /// The children of `value` (a stored node) this query selects, in memory.
    public func apply(to value: JSONValue) -> JSONValue {
        guard case .object(let children) = value else { return value }
        var entries = children.map { key, child in Entry(key: key.string, sortValue: sortValue(of: child)) }
        entries.sort { order($0, $1) < 0 }
        var selected = entries.filter { within($0) }
        switch limit {
        case .first(let n)?: selected = Array(selected.prefix(n))
        case .last(let n)?: selected = Array(selected.suffix(n))
        case nil: break
        }
        if selected.isEmpty { return .null }
        var result: [JSONKey: JSONValue] = [:]
        for entry in selected { result[entry.key] = children[entry.key] }
        return .object(result)
    }

    /// The keys of `value`'s children in this query's order (bounds and limit ignored).
    public func orderedKeys(of value: JSONValue) -> [String] {
        guard case .object(let children) = value else { return [] }
        var entries = children.map { key, child in Entry(key: key.string, sortValue: sortValue(of: child)) }
        entries.sort { order($0, $1) < 0 }
        return entries.map(\.key)
    }

    struct Entry {
        let key: String
        /// What the order compares: nil when ordering by key.
        let sortValue: JSONValue?
    }

    /// The value a child is ordered by (`.null` when missing; for `$priority`, the child's
    /// `.priority` member, which only `exportValue` carries).
    func sortValue(of child: JSONValue) -> JSONValue? {
        switch orderBy {
        case .key: return nil
        case .value: return child
        case .priority:
            if case .object(let members) = child { return members[".priority"] ?? .null }
            return .null
        case .child(let path):
            var current = child
            for key in path.segments {
                guard case .object(let members) = current, let next = members[key] else { return .null }
                current = next
            }
            return current
        }
    }

    /// Sort order: by the ordered value, ties by key (docs/protocol/rest.md §1.3).
    func order(_ a: Entry, _ b: Entry) -> Int {
        if let av = a.sortValue, let bv = b.sortValue {
            let byValue = QueryOrder.compare(av, bv)
            if byValue != 0 { return byValue }
        }
        return FirebaseKeyOrder.compare(a.key, b.key)
    }

    /// Whether an entry lies within the bounds.
    func within(_ entry: Entry) -> Bool {
        if let start {
            let c = compare(entry, start)
            if c < 0 || (c == 0 && !start.inclusive) { return false }
        }
        if let end {
            let c = compare(entry, end)
            if c > 0 || (c == 0 && !end.inclusive) { return false }
        }
        return true
    }

    /// The entry against a bound: by value, and at the value by the bound's key if it has one.
    private func compare(_ entry: Entry, _ bound: Bound) -> Int {
        let byValue = compare(entry, bound.value)
        if byValue != 0 || orderBy == .key { return byValue }
        guard let key = bound.key else { return 0 }
        return FirebaseKeyOrder.compare(entry.key, key)
    }

    private func compare(_ entry: Entry, _ bound: JSONValue) -> Int {
        switch orderBy {
        case .key:
            guard case .string(let key) = bound else { return 0 }
            return FirebaseKeyOrder.compare(entry.key, key)
        default:
            return QueryOrder.compare(entry.sortValue ?? .null, bound)
        }
    }
}

/// Firebase's order of values (docs/protocol/rest.md §1.3): null (or missing) < false <
/// true < numbers (ascending) < strings (as JavaScript compares them, by UTF-16 code units)
/// < objects. Objects compare equal to each other (ties are broken by key).
public enum QueryOrder {
    public static func rank(_ value: JSONValue) -> Int {
        switch value {
        case .null: return 0
        case .bool(false): return 1
        case .bool(true): return 2
        case .int, .double: return 3
        case .string: return 4
        case .object, .array: return 5
        }
    }

    public static func compare(_ a: JSONValue, _ b: JSONValue) -> Int {
        let (ra, rb) = (rank(a), rank(b))
        if ra != rb { return ra < rb ? -1 : 1 }
        switch (a, b) {
        case (.int(let x), .int(let y)): return x == y ? 0 : (x < y ? -1 : 1)
        case (.string(let x), .string(let y)):
            if x == y { return 0 }
            return x.utf16.lexicographicallyPrecedes(y.utf16) ? -1 : 1
        default:
            if ra == 3, let x = number(a), let y = number(b) { return x == y ? 0 : (x < y ? -1 : 1) }
            return 0
        }
    }

    static func number(_ value: JSONValue) -> Double? {
        switch value {
        case .int(let i): return Double(i)
        case .double(let d): return d
        default: return nil
        }
    }
}

extension TreeView {
    /// The query's result at `path`, read in memory (the default; `SQLiteTreeView` uses a
    /// query index when one is built).
    public func query(_ query: TreeQuery, at path: DataPath) throws(StoreError) -> JSONValue {
        query.apply(to: query.orderBy == .priority ? try exportValue(at: path) : try value(at: path))
    }

    /// Without stored priorities: the plain value.
    public func exportValue(at path: DataPath) throws(StoreError) -> JSONValue {
        try value(at: path)
    }
}
