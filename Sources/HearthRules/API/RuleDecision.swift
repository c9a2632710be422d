/// The answer to one access check.
public struct RuleDecision: Sendable, Hashable {
    public var allowed: Bool
    /// Why. Always ends with a one-line summary naming the deciding rule (or the missing
    /// grant, the failed `.validate`, the exceeded limit). With `explain: true` it first
    /// lists every rule evaluated, in order, with its result or runtime error, for
    /// `--explain` style tracing.
    public var explanation: [String]

    public init(allowed: Bool, explanation: [String]) {
        self.allowed = allowed
        self.explanation = explanation
    }
}
