import HearthJSON

/// The query parameters of a read, as the `query` rule variable sees them
/// (docs/protocol/rules.md §3.3).
public struct RuleQuery: Sendable, Hashable {
    public enum OrderBy: Sendable, Hashable {
        case key
        case value
        case priority
        case child(String)
    }

    /// `nil` when the read orders by nothing; `query.orderByKey` is then `true` (a
    /// convention of the conformance corpus, medium confidence:
    /// Tests/HearthRulesTests/Fixtures/README.md, "Harness conventions").
    public var orderBy: OrderBy?
    public var startAt: JSONValue?
    public var endAt: JSONValue?
    public var equalTo: JSONValue?
    public var limitToFirst: Int?
    public var limitToLast: Int?

    public init(
        orderBy: OrderBy? = nil,
        startAt: JSONValue? = nil,
        endAt: JSONValue? = nil,
        equalTo: JSONValue? = nil,
        limitToFirst: Int? = nil,
        limitToLast: Int? = nil
    ) {
        self.orderBy = orderBy
        self.startAt = startAt
        self.endAt = endAt
        self.equalTo = equalTo
        self.limitToFirst = limitToFirst
        self.limitToLast = limitToLast
    }
}
