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

    init(root: RuleNode, limits: RuleLimits) {
        self.root = root
        self.limits = limits
    }

    /// Compiles a rules file: relaxed JSON (comments, multi-line strings), structure
    /// checks, and every expression parsed and type-checked (docs/protocol/rules.md §3.1,
    /// §3.6). Throws with every problem found, each with its rule path, line and column.
    public static func compile(_ text: String, limits: RuleLimits = RuleLimits()) throws(RulesCompileError) -> RuleSet {
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
        switch RulesTreeBuilder.build(json, source: source) {
        case .success(let root): return RuleSet(root: root, limits: limits)
        case .failure(let error): throw error
        }
    }

    /// Compiles rules that were already parsed, e.g. from a `PUT /.settings/rules.json`
    /// body or a test fixture. Diagnostics then have line 0 (there is no file).
    public static func compile(json: JSONValue, limits: RuleLimits = RuleLimits()) throws(RulesCompileError) -> RuleSet {
        switch RulesTreeBuilder.build(RulesJSON(json), source: nil) {
        case .success(let root): return RuleSet(root: root, limits: limits)
        case .failure(let error): throw error
        }
    }

    /// The `.indexOn` entries declared for `path` (wildcards matched, a named child before
    /// the wildcard), or `[]` when the rules do not reach it.
    public func indexes(at path: DataPath) -> [String] {
        var node = root
        for key in path.segments {
            guard let next = node.child(key) else { return [] }
            node = next.node
        }
        return node.indexOn
    }
}
