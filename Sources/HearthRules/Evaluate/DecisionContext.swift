import HearthJSON

/// Everything one access decision evaluates against (docs/protocol/rules.md §3.3), plus its
/// work budget and optional trace. Created per decision and never shared.
struct DecisionContext {
    /// The tree before the operation: `root` and `data`.
    let before: any RuleDataSource
    /// The tree after the write: `newData`. Nil for reads (the checker keeps `newData` out
    /// of `.read` rules).
    let after: (any RuleDataSource)?
    let auth: RuntimeValue
    let now: Double
    let query: RuleQuery?
    private(set) var stepsLeft: Int
    let explain: Bool
    /// Lines for `RuleDecision.explanation` when `explain` is set.
    var trace: [String] = []
    /// Set when an evaluated rule read `data`, `root`, `newData` or `now`.
    var usedDataOrTime = false
    /// Set when an evaluated rule read `data`, `root` or `now`: what `newData` reads of the
    /// stored tree its data source sees (`RuleSet.canWriteWithoutData`).
    var usedStoredDataOrTime = false
    /// With coverage: this decision's probe hits, added to the rule set's counts when the
    /// context goes away (or early, when many are waiting).
    let hits: PendingHits?
    /// Told of each rule's evaluation time (a profiler); nil almost always.
    var timing: (any RuleTiming)?
    /// The rules evaluated so far and their times, while `timing` is set; told at the end.
    var ruleTimes: [RuleTime] = []

    init(before: any RuleDataSource, after: (any RuleDataSource)?, auth: JSONValue, now: Int64, query: RuleQuery?, limits: RuleLimits, explain: Bool,
         coverage: RuleCoverage? = nil, deferredCoverage: Bool = false) {
        self.hits = coverage.map { PendingHits($0, deferred: deferredCoverage) }
        self.before = before
        self.after = after
        self.auth = RuntimeValue(auth)
        self.now = Double(now)
        self.query = query
        self.stepsLeft = limits.maxEvaluationSteps
        self.explain = explain
    }

    mutating func charge(_ units: Int) throws(EvaluationFailure) {
        stepsLeft -= max(units, 0)
        if stepsLeft < 0 { throw .budgetExceeded }
    }

    /// Where a rule is evaluated: the node's data path and the wildcard keys captured on
    /// the way there (docs/protocol/rules.md §3.3 `$name`; `data`/`newData` are bound to
    /// this node).
    struct Frame {
        let path: DataPath
        let captures: [String]
    }

    /// Evaluates one rule. A runtime error makes it false (docs/protocol/rules.md §3.2);
    /// budget and data source failures propagate and deny the whole decision.
    mutating func run(_ rule: CompiledRule, at frame: Frame) throws(EvaluationFailure) -> Bool {
        guard timing != nil else { return try runUntimed(rule, at: frame) }
        let start = ContinuousClock.now
        var result = false
        defer {
            let elapsed = (ContinuousClock.now - start).components
            ruleTimes.append(RuleTime(location: rule.location, nanoseconds: elapsed.seconds * 1_000_000_000 + elapsed.attoseconds / 1_000_000_000,
                                      result: result))
        }
        result = try runUntimed(rule, at: frame)
        return result
    }

    /// Tells `timing` the rules this decision evaluated (at its end).
    func reportRuleTimes() {
        if let timing, !ruleTimes.isEmpty { timing.rulesEvaluated(ruleTimes) }
    }

    private mutating func runUntimed(_ rule: CompiledRule, at frame: Frame) throws(EvaluationFailure) -> Bool {
        let result: Bool
        var note: String?
        switch rule.body {
        case .constant(let value):
            result = value
            if let site = rule.site { hits?.record(site, value ? .true : .false) }
        case .expression(let ir):
            do {
                let value = try evaluate(ir, frame)
                if case .bool(let flag) = value {
                    result = flag
                } else {
                    result = false
                    note = "the rule produced a \(value.typeName), not a boolean"
                }
            } catch {
                switch error {
                case .runtime(let message):
                    result = false
                    if explain { trace.append("\(rule.location) at \(frame.path.description): error: \(message) → false") }
                    return result
                case .budgetExceeded, .dataSource, .validationLimitExceeded, .invalidWrite:
                    throw error
                }
            }
        }
        if explain {
            let suffix = note.map { ": error: \($0)" } ?? ""
            trace.append("\(rule.location) at \(frame.path.description)\(suffix) → \(result)")
        }
        return result
    }
}
