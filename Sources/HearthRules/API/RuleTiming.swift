
/// Told how long each rule took to evaluate, while a caller wants to know (a profiler).
/// Passed per decision (`RuleSet.canRead(…, timing:)`); nil, the default, costs one nil
/// check per evaluated rule.
public protocol RuleTiming: Sendable {
    /// The rules one decision evaluated, in order: each rule's location
    /// (`/rules/users/$uid/.write`) and how long that evaluation took. Told once per
    /// decision, at its end.
    func rulesEvaluated(_ timings: [RuleTime])
}

/// One evaluation of one rule, for `RuleTiming`.
public struct RuleTime: Sendable, Equatable {
    public let location: String
    public let nanoseconds: Int64
    /// What the rule evaluated to (a runtime error is false; an aborted decision's last
    /// rule is false too).
    public let result: Bool

    public init(location: String, nanoseconds: Int64, result: Bool = true) {
        self.location = location
        self.nanoseconds = nanoseconds
        self.result = result
    }
}
