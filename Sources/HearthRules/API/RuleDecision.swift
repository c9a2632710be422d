import HearthJSON

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
    /// Why a denied decision was denied, as data (nil when allowed): callers tell a failed
    /// `.validate` or an exhausted budget apart from a missing grant without parsing text.
    public var denial: RuleDenial?

    public init(allowed: Bool, explanation: [String], dependsOnDataOrTime: Bool = true, denial: RuleDenial? = nil) {
        self.allowed = allowed
        self.explanation = explanation
        self.dependsOnDataOrTime = dependsOnDataOrTime
        self.denial = allowed ? nil : (denial ?? .notGranted)
    }
}

/// The kind of a denial.
public enum RuleDenial: Sendable, Hashable {
    /// No `.read` / `.write` rule on the path granted it.
    case notGranted
    /// A `.validate` rule evaluated false (or failed at run time): the rule's location in
    /// the rules file (`/rules/users/$uid/.validate`), the data path it was evaluated at,
    /// and when it can tell, which fields of the written data were missing or failed their
    /// check (`DecisionContext.whyFalse`: the new data only, never stored data).
    case validationFailed(rule: String, path: DataPath, reason: String?)
    /// The decision could not be finished within `RuleLimits`: the evaluation budget
    /// (`maxEvaluationSteps`) or the number of written nodes under `.validate` rules
    /// (`maxValidatedNodes`) ran out. Not a judgement on the caller's rights: the write is
    /// too large to validate.
    case limitExceeded(RuleLimitKind, limit: Int)
    /// The data source failed, or the written value cannot be stored.
    case aborted
}

/// Which `RuleLimits` bound a decision crossed.
public enum RuleLimitKind: Sendable, Hashable {
    case evaluationSteps
    case validatedNodes
}
