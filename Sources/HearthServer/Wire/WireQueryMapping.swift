import HearthJSON
import HearthRules
import HearthStore
import HearthWire

/// A wire query object (spec §4.1) as the core's query: the store's selection, the rules'
/// `query.*` variables, and the `.indexOn` entry it needs (nil for key or priority order).
///
/// Bounds: a key name in a bound (`sn`/`en`) breaks ties among children exactly at the
/// value, in key order (`startAt(value, key)`, the usual way to page): a start takes them
/// from that key on, an end up to it. The sentinels `[MAX_NAME]` on a start and
/// `[MIN_NAME]` on an end exclude every child at the value (how `startAfter`/`endBefore`
/// arrive, from iOS always); `[MIN_NAME]` on a start and `[MAX_NAME]` on an end include them
/// all. Ordered by key, the bound's value is the key and a name is ignored.
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
            tree.start = TreeQuery.Bound(start.value, inclusive: inclusive, key: Self.tieBreak(start.name))
            rules.startAt = start.value
        }
        if let end = wire.end {
            let inclusive = end.inclusive && end.name != .min
            tree.end = TreeQuery.Bound(end.value, inclusive: inclusive, key: Self.tieBreak(end.name))
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

    /// A real key name breaks ties; the sentinels do not (see above).
    private static func tieBreak(_ name: WireQuery.Name) -> String? {
        if case .key(let key) = name { return key }
        return nil
    }
}
