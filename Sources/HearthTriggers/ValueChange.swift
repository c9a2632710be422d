import HearthJSON

/// A location's value before and after a write, as readers see them
/// (`FirebaseTree.render`: arrays, no priorities), and what Firebase's RTDB CloudEvents
/// carry for it (docs/protocol/functions.md §4.6): `data` (the value before) and `delta`.
struct ValueChange: Sendable, Equatable {
    var before: JSONValue
    var after: JSONValue

    init(before: JSONValue, after: JSONValue) {
        (self.before, self.after) = (before, after)
    }

    /// The event kinds this change is: always `written`; then `created` (nothing before),
    /// `deleted` (nothing after) or `updated` (both, different). Empty when nothing changed.
    var kinds: Set<TriggerEventKind> {
        if before == after { return [] }
        if before == .null { return [.written, .created] }
        if after == .null { return [.written, .deleted] }
        return [.written, .updated]
    }

    /// The change that, deep-merged into `before` with nulls pruned (what
    /// `firebase-functions`' `db_fn` does for written and updated events: `deep_merge`,
    /// then `prune_nones`), gives `after`. Minimal for objects: only the changed keys, a
    /// removed key as `null`, recursively. When either side is not an object (a leaf, an
    /// array, null), the SDKs take `delta` as the new value whole, so it is `after`.
    var delta: JSONValue { Self.delta(before, after) }

    static func delta(_ before: JSONValue, _ after: JSONValue) -> JSONValue {
        guard case .object(let old) = before, case .object(let new) = after else { return after }
        var changed: [JSONKey: JSONValue] = [:]
        for (key, value) in new where old[key] != value {
            if let previous = old[key], case .object = previous, case .object = value {
                changed[key] = delta(previous, value)
            } else {
                changed[key] = value
            }
        }
        for key in old.keys where new[key] == nil {
            changed[key] = .null
        }
        return .object(changed)
    }

    /// What the SDK rebuilds from `before` and `delta` (its merge, for tests and checks).
    static func merged(_ before: JSONValue, _ delta: JSONValue) -> JSONValue {
        guard case .object(let base) = before, case .object = delta else { return delta }
        return pruned(deepMerge(base, delta))
    }

    private static func deepMerge(_ base: [JSONKey: JSONValue], _ delta: JSONValue) -> JSONValue {
        guard case .object(let changes) = delta else { return delta }
        var result = base
        for (key, value) in changes {
            if case .object = value {
                result[key] = deepMerge(result[key]?.objectValue ?? [:], value)
            } else {
                result[key] = value
            }
        }
        return .object(result)
    }

    private static func pruned(_ value: JSONValue) -> JSONValue {
        guard case .object(let members) = value else { return value }
        var kept: [JSONKey: JSONValue] = [:]
        for (key, child) in members where child != .null { kept[key] = pruned(child) }
        return .object(kept)
    }
}

/// What a trigger fires on (docs/protocol/functions.md §4.6).
public enum TriggerEventKind: String, Sendable, Hashable, CaseIterable {
    case written, created, updated, deleted

    /// The CloudEvent type, `google.firebase.database.ref.v1.<kind>`.
    var cloudEventType: String { Self.typePrefix + rawValue }

    static let typePrefix = "google.firebase.database.ref.v1."

    /// A config's `event`: the short name or the full type.
    public init?(configName: String) {
        let short = configName.hasPrefix(Self.typePrefix) ? String(configName.dropFirst(Self.typePrefix.count)) : configName
        self.init(rawValue: short)
    }
}
