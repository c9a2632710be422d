/// Why an expression produced no value.
enum EvaluationFailure: Error, Sendable {
    /// A runtime error (type error, method on null, `root.parent()`…): the rule counts as
    /// false, for its own node only (docs/protocol/rules.md §3.2).
    case runtime(String)
    /// The decision's work budget ran out: the whole decision is denied.
    case budgetExceeded
    /// A write has more nodes under `.validate` rules than `RuleLimits.maxValidatedNodes`:
    /// the whole decision is denied.
    case validationLimitExceeded
    /// The written value cannot be stored (an invalid key): the whole decision is denied.
    case invalidWrite(String)
    /// The data source failed: the whole decision is denied.
    case dataSource(String)
}
