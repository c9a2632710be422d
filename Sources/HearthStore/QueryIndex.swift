import HearthJSON

/// Query indexes (docs/protocol/rest.md §1.3, docs/design.md §4): for a location and an
/// order (`.indexOn` child path or `.value`), one `query_index` row per child holding its
/// ordered value, so `orderBy` + a limit reads a handful of rows instead of every child.
///
/// Built lazily: the first query on a location is answered from the data (a full read, as
/// without an index) and asks the writer to build the index (the SQLite engine: a slice of
/// children per transaction, `StoreOptions.queryIndexChildrenPerSlice`); from then on the
/// writer keeps it in step with every write, in the same transaction, and queries read it. A write that
/// replaces an indexed location or one of its ancestors drops the index (rebuilt on the
/// next query).
package enum QueryIndex {
    /// The spec string of a query order, or nil when the order has no index (`$key` and
    /// `$priority` need none, docs/protocol/rest.md §1.3).
    package static func spec(of order: TreeQuery.OrderBy) -> String? {
        switch order {
        case .value: return ".value"
        case .child(let path): return path.storageKey
        case .key, .priority: return nil
        }
    }

    /// Most query indexes one store builds; past it queries keep reading in memory.
    package static let maxIndexes = 100_000

    /// The child key in a form whose byte order is Firebase key order (`FirebaseKeyOrder`):
    /// 32-bit integer keys first, numerically (then shorter first), then the rest. Ties
    /// between other keys are by UTF-8 bytes here (code point order); Firebase compares
    /// UTF-16 units, which differs only between U+E000–U+FFFF and astral characters.
    package static func keyOrder(_ key: String) -> String {
        if let n = FirebaseKeyOrder.int32Value(key) {
            let offset = Int64(n) - Int64(Int32.min)  // 0 ... 2^32-1
            var digits = String(offset)
            digits = String(repeating: "0", count: 10 - digits.count) + digits
            let length = String(key.utf8.count)
            return "0" + digits + String(repeating: "0", count: 2 - length.count) + length
        }
        return "1" + key
    }

    /// The ORDER BY and LIMIT an index query ends with, in the index's sort `columns`
    /// (ascending for `.first`, descending for `.last`), and the row count to bind to the
    /// `placeholder` it names; nil without a limit. Both engines' query indexes use it.
    package static func orderAndLimit(_ limit: TreeQuery.Limit?, columns: [String], placeholder: String) -> (sql: String, count: Int)? {
        switch limit {
        case .first(let n)?:
            return (" ORDER BY " + columns.joined(separator: ", ") + " LIMIT " + placeholder, n)
        case .last(let n)?:
            return (" ORDER BY " + columns.map { $0 + " DESC" }.joined(separator: ", ") + " LIMIT " + placeholder, n)
        case nil:
            return nil
        }
    }
}
