import HearthJSON

extension RuleSet {
    /// May `auth` read `path`? Grant-only cascade (docs/protocol/rules.md §3.2): every
    /// `.read` from the root down to `path` is tried, and the first that is true grants the
    /// read of `path` and everything below it. Rules below `path` are never consulted
    /// (rules are not filters); no grant means deny.
    ///
    /// - Parameters:
    ///   - data: the tree before the operation (`root`, `data`).
    ///   - auth: the `auth` variable: `.null` when signed out, otherwise an object with
    ///     `uid`, `provider` and `token`.
    ///   - now: server time in milliseconds since the epoch.
    ///   - query: the read's query parameters, or nil for a plain read.
    ///   - explain: also list every rule evaluated in the decision's explanation.
    ///   - timing: told each evaluated rule's time (a profiler).
    public func canRead(_ path: DataPath, data: any RuleDataSource, auth: JSONValue, now: Int64, query: RuleQuery?, explain: Bool = false,
                        timing: (any RuleTiming)? = nil) -> RuleDecision {
        var context = DecisionContext(before: data, after: nil, auth: auth, now: now, query: query, limits: limits, explain: explain, coverage: coverage)
        context.timing = timing
        return decideRead(path, context: &context)
    }

    /// True when a plain read of `path` is allowed by a decision that looked at neither
    /// data nor the clock, so it holds whatever the data (a read cache may then answer
    /// without asking again); false means "ask `canRead` with the data". With coverage its
    /// evaluations count only when it answers true: otherwise the caller asks `canRead`,
    /// which counts.
    public func readAllowedWithoutData(_ path: DataPath, auth: JSONValue, now: Int64, timing: (any RuleTiming)? = nil) -> Bool {
        var context = DecisionContext(before: AbsentData(), after: nil, auth: auth, now: now, query: nil, limits: limits, explain: false,
                                      coverage: coverage, deferredCoverage: true)
        context.timing = timing
        let decision = decideRead(path, context: &context)
        // Data is read only through `data` or `root`, which mark the decision as depending on it.
        let allowed = decision.allowed && !decision.dependsOnDataOrTime && context.hits?.overflowed != true
        if !allowed { context.hits?.discard() }
        return allowed
    }

    private func decideRead(_ path: DataPath, context: inout DecisionContext) -> RuleDecision {
        do {
            if let granted = try cascade(.read, to: path, context: &context) {
                return context.decision(true, "read of \(path.description) allowed by \(granted)")
            }
            return context.decision(false, "read of \(path.description) denied: no .read rule on the path granted it")
        } catch {
            return context.decision(false, Self.abortReason(error, operation: "read of \(path.description)"), denial: denial(error))
        }
    }

    /// Walks the rules from the root towards `path`, evaluating `kind` (`.read` or
    /// `.write`) at each node; returns the location of the first rule that grants, or nil.
    /// A runtime error makes only that rule false, so a deeper rule may still grant
    /// (docs/protocol/rules.md §3.2; the conformance corpus rates this medium confidence).
    func cascade(_ kind: RuleKind, to path: DataPath, context: inout DecisionContext, cache: GrantCache? = nil) throws(EvaluationFailure) -> String? {
        var node = root
        var captures: [String] = []
        let segments = path.segments
        var depth = 0
        while true {
            if let rule = node.rule(kind) {
                let nodePath = depth == segments.count ? path : DataPath(uncheckedSegments: Array(segments[0..<depth]))
                let granted: Bool
                if let known = cache?.granted(nodePath) {
                    granted = known
                } else {
                    granted = try context.run(rule, at: DecisionContext.Frame(path: nodePath, captures: captures))
                    cache?.record(nodePath, granted)
                }
                if granted { return rule.location }
            }
            guard depth < segments.count, let next = node.child(segments[depth]) else { return nil }
            if next.captured { captures.append(segments[depth]) }
            node = next.node
            depth += 1
        }
    }

    /// The denial an aborted decision reports.
    func denial(_ error: EvaluationFailure) -> RuleDenial {
        switch error {
        case .budgetExceeded: return .limitExceeded(.evaluationSteps, limit: limits.maxEvaluationSteps)
        case .validationLimitExceeded: return .limitExceeded(.validatedNodes, limit: limits.maxValidatedNodes)
        case .dataSource, .invalidWrite, .runtime: return .aborted
        }
    }

    static func abortReason(_ error: EvaluationFailure, operation: String) -> String {
        switch error {
        case .budgetExceeded:
            return "\(operation) denied: rule evaluation exceeded its work budget"
        case .dataSource(let message), .invalidWrite(let message):
            return "\(operation) denied: \(message)"
        case .runtime(let message):
            return "\(operation) denied: \(message)"
        case .validationLimitExceeded:
            return "\(operation) denied: the written value has more than the allowed number of nodes under .validate rules"
        }
    }
}

/// Results of `.write` rules already evaluated in one multi-path decision, by node path:
/// the same node is evaluated once however many written paths pass through it.
final class GrantCache {
    private var results: [[UInt8]: Bool] = [:]

    func granted(_ path: DataPath) -> Bool? {
        results[path.exactKey]
    }

    func record(_ path: DataPath, _ granted: Bool) {
        results[path.exactKey] = granted
    }
}

extension DataPath {
    /// The path's exact bytes, length-prefixed per segment: unlike `[String]`, it never
    /// treats canonically equivalent keys ("é" and "e\u{301}") as the same path.
    var exactKey: [UInt8] {
        var key: [UInt8] = []
        for segment in segments {
            let count = segment.utf8.count
            key.append(contentsOf: [UInt8(truncatingIfNeeded: count >> 24), UInt8(truncatingIfNeeded: count >> 16), UInt8(truncatingIfNeeded: count >> 8), UInt8(truncatingIfNeeded: count)])
            key.append(contentsOf: segment.utf8)
        }
        return key
    }
}

extension DecisionContext {
    func decision(_ allowed: Bool, _ summary: String, denial: RuleDenial? = nil) -> RuleDecision {
        reportRuleTimes()
        return RuleDecision(allowed: allowed, explanation: explain ? trace + [summary] : [summary], dependsOnDataOrTime: usedDataOrTime, denial: denial)
    }
}

/// No data at all, for `readAllowedWithoutData`: any read fails (the rule then counts as
/// false, and the decision says it used data). A struct: the read cache asks on every hit.
private struct AbsentData: RuleDataSource {
    struct NeedsData: Error {}

    func leaf(at path: DataPath) throws -> JSONValue? { throw NeedsData() }
    func childKeys(at path: DataPath) throws -> [String] { throw NeedsData() }
    func exists(at path: DataPath) throws -> Bool { throw NeedsData() }
}
