import HearthJSON

/// A compiled, immutable rules file: load it once, then ask it for access decisions from
/// any thread (docs/protocol/rules.md §3).
///
/// ```swift
/// let rules = try RuleSet.compile(fileText)
/// let decision = rules.canRead(path, data: view, auth: claims, now: nowMillis, query: nil)
/// ```
public final class RuleSet: Sendable {
    let root: RuleNode
    public let limits: RuleLimits
    /// The coverage counts of a rule set compiled with `coverage: true`, which every
    /// decision it makes adds to; nil for a plain compile (which has no probes and
    /// records nothing).
    public let coverage: RuleCoverage?
    /// What it was compiled from, to compile it again with coverage (`withCoverage()`).
    private let source: Source

    private enum Source: Sendable {
        case text(String)
        case json(JSONValue)
    }

    private init(root: RuleNode, limits: RuleLimits, coverage: RuleCoverage?, source: Source) {
        self.root = root
        self.limits = limits
        self.coverage = coverage
        self.source = source
    }

    /// Compiles a rules file: relaxed JSON (comments, multi-line strings), structure
    /// checks, and every expression parsed and type-checked (docs/protocol/rules.md §3.1,
    /// §3.6). Throws with every problem found, each with its rule path, line and column.
    ///
    /// With `coverage`, every expression and sub-expression is compiled with a probe and
    /// listed as a coverage site (`coverage`); the rule set then counts what each one
    /// produced in every decision. It throws, too, for a file with more than
    /// `limits.maxCoverageSites` sites.
    public static func compile(_ text: String, limits: RuleLimits = RuleLimits(), coverage: Bool = false) throws(RulesCompileError) -> RuleSet {
        let source = SourceText(text)
        let json: RulesJSON
        do {
            json = try RulesFileParser.parse(source)
        } catch {
            let (line, column) = source.location(ofByte: error.offset)
            throw RulesCompileError(diagnostics: [
                RuleDiagnostic(kind: .syntax, rulePath: error.path, line: line, column: column, message: error.message)
            ])
        }
        return try make(RulesTreeBuilder.build(json, source: source, coverage: coverage, maxSites: limits.maxCoverageSites),
                        limits: limits, coverage: coverage, source: .text(text))
    }

    private static func make(_ built: Result<(root: RuleNode, sites: [CoverageSite]), RulesCompileError>, limits: RuleLimits,
                             coverage: Bool, source: Source) throws(RulesCompileError) -> RuleSet {
        switch built {
        case .success(let (root, sites)):
            let sourceText: String?
            if case .text(let text) = source { sourceText = text } else { sourceText = nil }
            return RuleSet(root: root, limits: limits, coverage: coverage ? RuleCoverage(sites: sites, sourceText: sourceText) : nil, source: source)
        case .failure(let error):
            throw error
        }
    }

    /// The same rules compiled with coverage (fresh counts); throws only when they have
    /// more than `limits.maxCoverageSites` sites.
    public func withCoverage() throws(RulesCompileError) -> RuleSet {
        switch source {
        case .text(let text): return try RuleSet.compile(text, limits: limits, coverage: true)
        case .json(let json): return try RuleSet.compile(json: json, limits: limits, coverage: true)
        }
    }

    /// Compiles rules that were already parsed, e.g. from a `PUT /.settings/rules.json`
    /// body or a test fixture. Diagnostics then have line 0 (there is no file).
    public static func compile(json: JSONValue, limits: RuleLimits = RuleLimits(), coverage: Bool = false) throws(RulesCompileError) -> RuleSet {
        try make(RulesTreeBuilder.build(RulesJSON(json), source: nil, coverage: coverage, maxSites: limits.maxCoverageSites),
                 limits: limits, coverage: coverage, source: .json(json))
    }

    /// The `.indexOn` entries declared for `path` (wildcards matched, a named child before
    /// the wildcard), or `[]` when the rules do not reach it.
    public func indexes(at path: DataPath) -> [String] {
        node(at: path)?.indexOn ?? []
    }

    /// With coverage: counts a query ordered by `entry` (a child path or `.value`) at
    /// `path` as a use of the `.indexOn` entry declared there, if there is one. The
    /// database calls it for every query that names an index, served by it or not.
    public func recordIndexUse(_ entry: String, at path: DataPath) {
        guard let coverage, let node = node(at: path), let position = node.indexOn.firstIndex(of: entry),
              position < node.indexOnSites.count else { return }
        coverage.add([RuleCoverage.hit(node.indexOnSites[position], .used)])
    }

    private func node(at path: DataPath) -> RuleNode? {
        var node = root
        for key in path.segments {
            guard let next = node.child(key) else { return nil }
            node = next.node
        }
        return node
    }
}
