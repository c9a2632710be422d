import HearthJSON

/// A listen's or get's query object (docs/protocol/wire.md §4.1), decoded: which index
/// orders the children, the start and end bounds as (value, key name) pairs, and the limit.
///
/// - `i` absent means priority order; `.key`, `.value`, or a child path.
/// - A bound is (`sp`, `sn`) / (`ep`, `en`); a missing name means `[MIN_NAME]` for a start
///   and `[MAX_NAME]` for an end. `sin`/`ein` say whether a child exactly at the bound is
///   included; iOS never sends them, so their absence means inclusive.
/// - `l` with `vf` `l` (first N) or `r` (last N); iOS sends `vf` for its legacy `limit`.
public struct WireQuery: Sendable, Hashable {
    public enum Index: Sendable, Hashable {
        case priority
        case key
        case value
        /// A child path such as `createdAt` or `address/city`.
        case child(String)
    }

    /// A key name in a bound: a real key, or one of the sentinels before/after every key.
    public enum Name: Sendable, Hashable {
        case min
        case key(String)
        case max
    }

    public struct Bound: Sendable, Hashable {
        public var value: JSONValue
        public var name: Name
        public var inclusive: Bool
    }

    public enum Limit: Sendable, Hashable {
        case first(Int)
        case last(Int)
    }

    public var index: Index = .priority
    public var start: Bound?
    public var end: Bound?
    public var limit: Limit?

    public init(index: Index = .priority, start: Bound? = nil, end: Bound? = nil, limit: Limit? = nil) {
        self.index = index
        self.start = start
        self.end = end
        self.limit = limit
    }

    /// Whether the query filters (a bound or a limit): only such listens carry a tag and
    /// get tagged pushes; an ordering alone loads everything (docs/protocol/wire.md §4.2).
    public var filters: Bool { start != nil || end != nil || limit != nil }

    static let minName = "[MIN_NAME]"
    static let maxName = "[MAX_NAME]"

    /// Decodes a query object; `{}` is the plain location. Unknown keys are ignored (newer
    /// SDKs may add some); known keys of the wrong type are refused.
    public init(_ object: JSONValue) throws(WireError) {
        guard case .object(let members) = object else { throw .malformedMessage }
        switch members["i"] {
        case nil: index = .priority
        case .string(".key")?: index = .key
        case .string(".value")?: index = .value
        case .string(".priority")?: index = .priority
        case .string(let path)? where !path.isEmpty: index = .child(path)
        default: throw .malformedMessage
        }
        start = try Self.bound(members, value: "sp", name: "sn", inclusive: "sin", missingName: .min)
        end = try Self.bound(members, value: "ep", name: "en", inclusive: "ein", missingName: .max)
        switch (members["l"], members["vf"]) {
        case (nil, _): limit = nil
        case (.int(let n)?, .string("l")?) where n > 0 && n <= Int64(Int32.max): limit = .first(Int(n))
        case (.int(let n)?, .string("r")?) where n > 0 && n <= Int64(Int32.max): limit = .last(Int(n))
        case (.int(let n)?, nil) where n > 0 && n <= Int64(Int32.max): limit = .first(Int(n))
        default: throw .malformedMessage
        }
    }

    private static func bound(
        _ members: [JSONKey: JSONValue], value: JSONKey, name: JSONKey, inclusive: JSONKey, missingName: Name
    ) throws(WireError) -> Bound? {
        guard let boundValue = members[value] else {
            guard members[name] == nil else { throw .malformedMessage }
            return nil
        }
        switch boundValue {
        case .object, .array: throw .malformedMessage
        default: break
        }
        let boundName: Name
        switch members[name] {
        case nil: boundName = missingName
        case .string(minName)?: boundName = .min
        case .string(maxName)?: boundName = .max
        case .string(let key)?: boundName = .key(key)
        default: throw .malformedMessage
        }
        let isInclusive: Bool
        switch members[inclusive] {
        case nil: isInclusive = true
        case .bool(let flag)?: isInclusive = flag
        default: throw .malformedMessage
        }
        return Bound(value: boundValue, name: boundName, inclusive: isInclusive)
    }
}
