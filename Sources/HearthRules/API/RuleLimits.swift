/// Work limits for one access decision. A decision that would exceed one is denied, with
/// the reason in its explanation: rules are untrusted input as far as cost goes (a deep
/// `child()` chain, a long regex search, a huge write under many `.validate` rules).
public struct RuleLimits: Sendable, Hashable {
    /// Default evaluation budget per decision, in work units: one per expression node
    /// evaluated, a few per data lookup, and per byte-proportional amounts for string
    /// building and regex matching.
    public static let defaultMaxEvaluationSteps = 1_000_000
    /// Default cap on written nodes walked to find `.validate` rules in one write.
    public static let defaultMaxValidatedNodes = 100_000
    /// Default cap on coverage sites (expressions, sub-expressions, constant rules and
    /// `.indexOn` entries) in a rules file compiled for coverage: each holds a row of
    /// counters, so a larger file is refused for coverage (it still compiles plainly).
    public static let defaultMaxCoverageSites = 50_000
    /// Work units charged for one lookup in the data source.
    static let dataLookupCost = 4

    public var maxEvaluationSteps: Int
    public var maxValidatedNodes: Int
    public var maxCoverageSites: Int

    public init(
        maxEvaluationSteps: Int = RuleLimits.defaultMaxEvaluationSteps,
        maxValidatedNodes: Int = RuleLimits.defaultMaxValidatedNodes,
        maxCoverageSites: Int = RuleLimits.defaultMaxCoverageSites
    ) {
        self.maxEvaluationSteps = maxEvaluationSteps
        self.maxValidatedNodes = maxValidatedNodes
        self.maxCoverageSites = maxCoverageSites
    }
}
