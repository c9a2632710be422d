/// The outcome of one conformance entry.
public struct ConformanceResult: Sendable {
    public let id: String
    public let passed: Bool
    /// For a failure, what went wrong (expected versus actual and the decision's reason).
    public let detail: String
    /// The decision, for evaluation cases.
    public let decision: RuleDecision?

    public init(id: String, passed: Bool, detail: String, decision: RuleDecision? = nil) {
        self.id = id
        self.passed = passed
        self.detail = detail
        self.decision = decision
    }
}

/// The outcome of a whole corpus file.
public struct ConformanceReport: Sendable {
    public var results: [ConformanceResult]

    public init(results: [ConformanceResult]) {
        self.results = results
    }

    public var passedCount: Int { results.count { $0.passed } }
    public var failedCount: Int { results.count { !$0.passed } }
    public var failures: [ConformanceResult] { results.filter { !$0.passed } }

    /// One line per failing entry (`id: detail`).
    public var failureLines: [String] { failures.map { "\($0.id): \($0.detail)" } }

    /// `N passed, N failed`
    public var summary: String { "\(passedCount) passed, \(failedCount) failed" }
}
