import HearthJSON

/// One case of the rules conformance corpus (`Tests/HearthRulesTests/Fixtures/README.md`,
/// "Case format"), read from its JSON form.
public struct ConformanceCase: Sendable {
    public enum Operation: Sendable, Equatable {
        case read(query: RuleQuery?)
        case set(JSONValue)
        /// Keys are paths relative to `path`.
        case update(JSONValue)
    }

    public enum RulesSource: Sendable {
        /// The raw file text (`rules_text`, or `rules` given as a string).
        case text(String)
        /// The parsed `rules` object.
        case json(JSONValue)
    }

    /// When the case has no `now`: any fixed time will do, no rule then reads it.
    public static let defaultNow: Int64 = 1_700_000_000_000

    public let id: String
    public let rules: RulesSource
    public let data: JSONValue
    public let auth: JSONValue
    public let now: Int64
    public let path: String
    public let operation: Operation
    public let expectAllowed: Bool

    /// Reads a case; throws a message naming the missing or malformed field. With
    /// `defaultRules` (`hearth rules test --rules`), a case without `rules` has those.
    public init(json: JSONValue, defaultRules: RulesSource? = nil) throws(ConformanceError) {
        guard case .object(let fields) = json else { throw ConformanceError("a case must be an object") }
        guard case .string(let id)? = fields["id"] else { throw ConformanceError("a case needs a string \"id\"") }
        self.id = id
        if case .string(let text)? = fields["rules_text"] {
            rules = .text(text)
        } else if case .string(let text)? = fields["rules"] {
            rules = .text(text)
        } else if let object = fields["rules"] {
            rules = .json(object)
        } else if let defaultRules {
            rules = defaultRules
        } else {
            throw ConformanceError("\(id): no \"rules\"")
        }
        data = fields["data"] ?? .null
        auth = fields["auth"] ?? .null
        switch fields["now"] {
        case .int(let value)?: now = value
        case .double(let value)? where value.rounded() == value && abs(value) < 9e15: now = Int64(value)
        case nil, .null?: now = Self.defaultNow
        default: throw ConformanceError("\(id): \"now\" must be an integer")
        }
        guard case .string(let path)? = fields["path"] else { throw ConformanceError("\(id): no \"path\"") }
        self.path = path
        switch fields["expect"] {
        case .string("allow")?: expectAllowed = true
        case .string("deny")?: expectAllowed = false
        default: throw ConformanceError("\(id): \"expect\" must be \"allow\" or \"deny\"")
        }
        switch fields["op"] {
        case .string("read")?:
            operation = .read(query: try Self.query(fields["query"], id: id))
        case .string("set")?:
            guard let value = fields["value"] else { throw ConformanceError("\(id): a set needs \"value\"") }
            operation = .set(value)
        case .string("update")?:
            guard let updates = fields["updates"] else { throw ConformanceError("\(id): an update needs \"updates\"") }
            operation = .update(updates)
        default:
            throw ConformanceError("\(id): \"op\" must be read, set or update")
        }
    }

    /// The corpus's `query` object: `orderByChild`, `orderByKey`/`orderByValue`/
    /// `orderByPriority` (true), `startAt`, `endAt`, `equalTo`, `limitToFirst`,
    /// `limitToLast`.
    static func query(_ json: JSONValue?, id: String) throws(ConformanceError) -> RuleQuery? {
        guard let json, json != .null else { return nil }
        guard case .object(let fields) = json else { throw ConformanceError("\(id): \"query\" must be an object") }
        var query = RuleQuery()
        for (name, value) in fields {
            switch (name, value) {
            case ("orderByChild", .string(let child)): query.orderBy = .child(child)
            case ("orderByKey", .bool(true)): query.orderBy = .key
            case ("orderByValue", .bool(true)): query.orderBy = .value
            case ("orderByPriority", .bool(true)): query.orderBy = .priority
            case ("startAt", _): query.startAt = value
            case ("endAt", _): query.endAt = value
            case ("equalTo", _): query.equalTo = value
            case ("limitToFirst", .int(let limit)): query.limitToFirst = Int(limit)
            case ("limitToLast", .int(let limit)): query.limitToLast = Int(limit)
            default: throw ConformanceError("\(id): unsupported query field \(name)")
            }
        }
        return query
    }
}

/// A malformed corpus entry (not a rules failure).
public struct ConformanceError: Error, Sendable, CustomStringConvertible {
    public let description: String

    public init(_ description: String) {
        self.description = description
    }
}
