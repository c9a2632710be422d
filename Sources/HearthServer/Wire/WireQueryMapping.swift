import HearthJSON
import HearthWire

/// A wire query object (docs/protocol/wire.md §4.1) parsed into the core's `DatabaseQuery`
/// (the store's selection, the rules' `query.*` variables, the `.indexOn` entry it needs).
///
/// Bounds: a key name in a bound (`sn`/`en`) breaks ties among children exactly at the
/// value, in key order (`startAt(value, key)`, the usual way to page): a start takes them
/// from that key on, an end up to it. The sentinels `[MAX_NAME]` on a start and
/// `[MIN_NAME]` on an end exclude every child at the value (how `startAfter`/`endBefore`
/// arrive, from iOS always); `[MIN_NAME]` on a start and `[MAX_NAME]` on an end include them
/// all. Ordered by key, the bound's value is the key and a name is ignored.
struct WireListenQuery: Sendable, Hashable {
    let listen: DatabaseQuery
    var requiredIndex: String? { listen.requiredIndex }

    init(_ wire: WireQuery) throws(WireError) {
        var query: DatabaseQuery
        switch wire.index {
        case .priority: query = DatabaseQuery(orderBy: .priority)
        case .key: query = DatabaseQuery(orderBy: .key)
        case .value: query = DatabaseQuery(orderBy: .value)
        case .child(let text):
            guard let path = try? DataPath(string: text), !path.isRoot else { throw .malformedMessage }
            query = DatabaseQuery(orderBy: .child(path))
        }
        if let start = wire.start {
            query.start(at: start.value, inclusive: start.inclusive && start.name != .max, key: Self.tieBreak(start.name))
        }
        if let end = wire.end {
            query.end(at: end.value, inclusive: end.inclusive && end.name != .min, key: Self.tieBreak(end.name))
        }
        if let start = wire.start, let end = wire.end, start.value == end.value, start.inclusive, end.inclusive {
            query.rules.equalTo = start.value
        }
        switch wire.limit {
        case .first(let n)?: query.limit(toFirst: n)
        case .last(let n)?: query.limit(toLast: n)
        case nil: break
        }
        listen = query
    }

    /// A real key name breaks ties; the sentinels do not (see above).
    private static func tieBreak(_ name: WireQuery.Name) -> String? {
        if case .key(let key) = name { return key }
        return nil
    }
}
