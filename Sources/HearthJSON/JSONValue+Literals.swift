/// Literal syntax for `JSONValue`, so tests and fixtures read like JSON:
/// `let v: JSONValue = ["a": [1, 2.5, "x", true]]`.
///
/// There is deliberately no `ExpressibleByNilLiteral`: `nil` must keep meaning
/// `Optional.none` where a `JSONValue?` is expected (e.g. `FirebaseTree.normalize`'s
/// "delete"). Write `.null` for JSON null.
extension JSONValue: ExpressibleByBooleanLiteral {
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}

extension JSONValue: ExpressibleByIntegerLiteral {
    public init(integerLiteral value: Int64) { self = .int(value) }
}

extension JSONValue: ExpressibleByFloatLiteral {
    public init(floatLiteral value: Double) { self = .double(value) }
}

extension JSONValue: ExpressibleByStringLiteral {
    public init(stringLiteral value: String) { self = .string(value) }
}

extension JSONValue: ExpressibleByArrayLiteral {
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
}

extension JSONValue: ExpressibleByDictionaryLiteral {
    /// Duplicate keys: the last wins, as in the parser.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        var members: [JSONKey: JSONValue] = [:]
        for (key, value) in elements { members[key] = value }
        self = .object(members)
    }
}
