import HearthJSON
@testable import HearthRules
import Testing

/// `Parser.maxExpressionHeight`: an operator chain nests without parentheses, and the
/// checker and the evaluator recurse per level, so a chain longer than the limit is refused
/// at load time instead of exhausting the stack.
@Suite struct ExpressionHeightTests {
    static func chain(_ count: Int, last: String = "true") -> String {
        Array(repeating: "false", count: count - 1).joined(separator: " || ") + " || " + last
    }

    @Test func aChainAtTheLimitCompilesAndEvaluatesWithAndWithoutProbes() throws {
        #expect(Parser.maxExpressionHeight == 512)
        let text = #"{"rules": {".read": "\#(Self.chain(Parser.maxExpressionHeight))"}}"#
        for coverage in [false, true] {
            let rules = try RuleSet.compile(text, coverage: coverage)
            #expect(rules.canRead(path("a"), data: JSONTreeSource(nil), auth: .null, now: testNow, query: nil).allowed)
        }
    }

    @Test func aChainPastTheLimitIsRefusedWithItsPlace() {
        let errors = diagnostics(#"{"rules": {".read": "\#(Self.chain(Parser.maxExpressionHeight + 1))"}}"#)
        #expect(errors.count == 1)
        #expect(errors.first?.message == "expression too large: more than 512 operations inside one another")
        #expect(errors.first?.line == 1 && errors.first?.rulePath == "/rules/.read")
        // A long chain of a thousand times the limit too: refused, not a crash.
        #expect(diagnostics(#"{"rules": {".read": "\#(Self.chain(Parser.maxExpressionHeight * 1000))"}}"#).count == 1)
    }

    /// The default `RuleLimits.defaultMaxCoverageSites`, crossed by one site: a hundred
    /// rules of 250 terms (499 sites each) and a hundred constant rules make exactly 50,000.
    @Test func theDefaultSiteLimitIsCrossedByOne() throws {
        func file(extra: Bool) -> String {
            let nodes = (0..<100).map { #""c\#($0)": {".read": "\#(Self.chain(250))", ".write": true}"# }
            return #"{"rules": {\#(nodes.joined(separator: ", "))\#(extra ? #", ".validate": true"# : "")}}"#
        }
        #expect(try RuleSet.compile(file(extra: false), coverage: true).coverage?.sites.count == RuleLimits.defaultMaxCoverageSites)
        #expect(throws: RulesCompileError.self) { try RuleSet.compile(file(extra: true), coverage: true) }
        #expect(try RuleSet.compile(file(extra: true)).coverage == nil)
    }
}
