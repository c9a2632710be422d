import HearthJSON
import HearthRules
import HearthStore
import HearthWire

/// A wire query object (spec §4.1) as the core's query: the store's selection, the rules'
/// `query.*` variables, and the `.indexOn` entry it needs (nil for key or priority order).
///
/// Bounds: the store's bounds compare index values only, so a key name in a bound
/// (`sn`/`en`, the tie-break among children with the same value) is honoured only as the
/// sentinels: `[MAX_NAME]` on a start or `[MIN_NAME]` on an end excludes children exactly
/// at the value (how `startAfter`/`endBefore` arrive, from iOS always); another key name
/// keeps the value inclusive (**choice**, docs/client-sdks.md).
struct WireListenQuery: Sendable, Hashable {
    let listen: ListenQuery
    let requiredIndex: String?

    init(_ wire: WireQuery) throws(WireError) {
        var tree: TreeQuery
        var rules: RuleQuery
        switch wire.index {
        case .priority:
            tree = TreeQuery(orderBy: .priority)
            rules = RuleQuery(orderBy: .priority)
            requiredIndex = nil
        case .key:
            tree = TreeQuery(orderBy: .key)
            rules = RuleQuery(orderBy: .key)
            requiredIndex = nil
        case .value:
            tree = TreeQuery(orderBy: .value)
            rules = RuleQuery(orderBy: .value)
            requiredIndex = ".value"
        case .child(let text):
            guard let path = try? DataPath(string: text), !path.isRoot else { throw .malformedMessage }
            tree = TreeQuery(orderBy: .child(path))
            rules = RuleQuery(orderBy: .child(path.storageKey))
            requiredIndex = path.storageKey
        }
        if let start = wire.start {
            let inclusive = start.inclusive && start.name != .max
            tree.start = TreeQuery.Bound(start.value, inclusive: inclusive)
            rules.startAt = start.value
        }
        if let end = wire.end {
            let inclusive = end.inclusive && end.name != .min
            tree.end = TreeQuery.Bound(end.value, inclusive: inclusive)
            rules.endAt = end.value
        }
        if let start = wire.start, let end = wire.end, start.value == end.value, start.inclusive, end.inclusive {
            rules.equalTo = start.value
        }
        switch wire.limit {
        case .first(let n)?:
            tree.limit = .first(n)
            rules.limitToFirst = n
        case .last(let n)?:
            tree.limit = .last(n)
            rules.limitToLast = n
        case nil:
            break
        }
        listen = ListenQuery(tree: tree, rules: rules)
    }
}
