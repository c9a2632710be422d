import HearthJSON
import HearthRules
import HearthStore

/// The query of a read or a listen, for every transport: what the store selects,
/// what the rules see as `query.*`, and which `.indexOn` entry it needs. REST parameters
/// (docs/protocol/rest.md §1.3) and wire query objects (docs/protocol/wire.md §4.1) are
/// parsed into one by their adapters, through these builders, so both fill the same fields
/// the same way.
public struct DatabaseQuery: Sendable, Hashable {
    public var tree: TreeQuery
    public var rules: RuleQuery
    /// The `.indexOn` entry the query needs at its path: the child path, or `.value`; nil
    /// for `$key` and `$priority`, which need none.
    public var requiredIndex: String?

    /// What the children are ordered by.
    public enum Order: Sendable, Hashable {
        case key, value, priority
        /// A child path below each child (not the root).
        case child(DataPath)
    }

    public init(orderBy order: Order) {
        switch order {
        case .key:
            (tree, rules, requiredIndex) = (TreeQuery(orderBy: .key), RuleQuery(orderBy: .key), nil)
        case .value:
            (tree, rules, requiredIndex) = (TreeQuery(orderBy: .value), RuleQuery(orderBy: .value), ".value")
        case .priority:
            (tree, rules, requiredIndex) = (TreeQuery(orderBy: .priority), RuleQuery(orderBy: .priority), nil)
        case .child(let path):
            (tree, rules, requiredIndex) = (TreeQuery(orderBy: .child(path)), RuleQuery(orderBy: .child(path.storageKey)), path.storageKey)
        }
    }

    /// Children from `value` on (`inclusive`) or after it; `key` breaks ties at the value.
    public mutating func start(at value: JSONValue, inclusive: Bool, key: String? = nil) {
        tree.start = TreeQuery.Bound(value, inclusive: inclusive, key: key)
        rules.startAt = value
    }

    /// Children up to `value` (`inclusive`) or before it; `key` breaks ties at the value.
    public mutating func end(at value: JSONValue, inclusive: Bool, key: String? = nil) {
        tree.end = TreeQuery.Bound(value, inclusive: inclusive, key: key)
        rules.endAt = value
    }

    /// Only children at `value` (REST `equalTo`; the rules see `query.equalTo`).
    public mutating func equal(to value: JSONValue) {
        tree.start = TreeQuery.Bound(value, inclusive: true)
        tree.end = TreeQuery.Bound(value, inclusive: true)
        rules.equalTo = value
    }

    /// The first `n` children of the window.
    public mutating func limit(toFirst n: Int) {
        tree.limit = .first(n)
        rules.limitToFirst = n
    }

    /// The last `n` children of the window.
    public mutating func limit(toLast n: Int) {
        tree.limit = .last(n)
        rules.limitToLast = n
    }
}

extension Database {
    /// The `.indexOn` entry `query` needs at `path` that the current rules do not define,
    /// or nil. REST refuses such a query (as Firebase's REST does); the wire protocol
    /// serves it with a warning. Every query that needs an index comes here (REST, streams,
    /// the wire protocol): the policy is told it was asked for (rules coverage).
    public func missingIndex(_ query: DatabaseQuery?, at path: DataPath) -> String? {
        guard let index = query?.requiredIndex else { return nil }
        policy.queried(index: index, at: path)
        guard !policy.indexes(at: path).contains(index) else { return nil }
        if profiler.isRecording { profiler.unindexed(at: path, index: index) }
        return index
    }
}
