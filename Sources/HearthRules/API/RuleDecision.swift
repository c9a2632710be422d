/// The answer to one access check.
public struct RuleDecision: Sendable, Hashable {
    public var allowed: Bool
    /// Why. Always ends with a one-line summary naming the deciding rule (or the missing
    /// grant, the failed `.validate`, the exceeded limit). With `explain: true` it first
    /// lists every rule evaluated, in order, with its result or runtime error, for
    /// `--explain` style tracing.
    public var explanation: [String]
    /// False when no rule evaluated for this decision looked at `data`, `root`, `newData`
    /// or `now`: the same caller asking for the same path gets the same answer until the
    /// rules change, whatever the data (a stream then needs no re-check per change).
    public var dependsOnDataOrTime: Bool

    public init(allowed: Bool, explanation: [String], dependsOnDataOrTime: Bool = true) {
        self.allowed = allowed
        self.explanation = explanation
        self.dependsOnDataOrTime = dependsOnDataOrTime
    }
}
