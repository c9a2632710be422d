import HearthJSON
@testable import HearthRules
import Testing

/// Every limit is a named constant with a test that crosses it.
@Suite struct LimitTests {
    static let empty = JSONTreeSource(nil)

    @Test func stepBudgetCrossedDenies() {
        let text = #"{"rules": {".read": "1 + 1 == 2 && 2 + 2 == 4 && 3 + 3 == 6 && 4 + 4 == 8"}}"#
        let roomy = compile(text)
        #expect(roomy.canRead(.root, data: Self.empty, auth: .null, now: testNow, query: nil).allowed)

        let tight = compile(text, limits: RuleLimits(maxEvaluationSteps: 10))
        let decision = tight.canRead(.root, data: Self.empty, auth: .null, now: testNow, query: nil)
        #expect(!decision.allowed)
        #expect(decision.explanation.last?.contains("work budget") == true)
    }

    /// A deeper rule that would grant is never reached once the budget is gone: the whole
    /// decision denies, it does not skip to the next rule.
    @Test func budgetExhaustionIsNotARuleError() {
        let text = #"{"rules": {".read": "'a' + 'b' + 'c' + 'd' + 'e' == 'abcde' && false", "x": {".read": true}}}"#
        let tight = compile(text, limits: RuleLimits(maxEvaluationSteps: 5))
        #expect(!tight.canRead(path("x"), data: Self.empty, auth: .null, now: testNow, query: nil).allowed)
        #expect(compile(text).canRead(path("x"), data: Self.empty, auth: .null, now: testNow, query: nil).allowed)
    }

    /// String building is charged by size: repeated `replace` that would grow a string
    /// sixteenfold per step hits the default budget long before memory does.
    @Test func defaultBudgetStopsStringBlowUp() {
        let grow = ".replace('a', 'aaaaaaaaaaaaaaaa')"
        let rule = "newData.val()" + String(repeating: grow, count: 8) + ".length > 0"
        let rules = compile(#"{"rules": {"s": {".write": true, ".validate": "\#(rule)"}}}"#)
        let decision = rules.canWrite([(path("s"), .string("a"))], data: Self.empty, auth: .null, now: testNow)
        #expect(!decision.allowed)
        #expect(decision.explanation.last?.contains("work budget") == true)
        // Four steps (65,536 characters) fit the budget.
        let small = compile(#"{"rules": {"s": {".write": true, ".validate": "newData.val()\#(String(repeating: grow, count: 4)).length == 65536"}}}"#)
        #expect(small.canWrite([(path("s"), .string("a"))], data: Self.empty, auth: .null, now: testNow).allowed)
    }

    @Test func validatedNodeCapCrossedDenies() {
        let text = #"{"rules": {"items": {".write": true, "$id": {".validate": "newData.isNumber()"}}}}"#
        var items: [String: JSONValue] = [:]
        for index in 0..<11 { items["i\(index)"] = .int(Int64(index)) }
        let value = JSONValue.object(items)

        let roomy = compile(text, limits: RuleLimits(maxValidatedNodes: 11))
        #expect(roomy.canWrite([(path("items"), value)], data: Self.empty, auth: .null, now: testNow).allowed)

        let tight = compile(text, limits: RuleLimits(maxValidatedNodes: 10))
        let decision = tight.canWrite([(path("items"), value)], data: Self.empty, auth: .null, now: testNow)
        #expect(!decision.allowed)
        #expect(decision.explanation.last?.contains("number of nodes") == true)
    }

    /// Nodes without rules below them are not walked, so a big write under no `.validate`
    /// costs nothing and is not capped.
    @Test func nodesWithoutRulesAreNotCounted() {
        let text = #"{"rules": {"blob": {".write": true}}}"#
        var items: [String: JSONValue] = [:]
        for index in 0..<50 { items["i\(index)"] = .int(Int64(index)) }
        let tight = compile(text, limits: RuleLimits(maxValidatedNodes: 1))
        #expect(tight.canWrite([(path("blob"), .object(items))], data: Self.empty, auth: .null, now: testNow).allowed)
    }

    @Test func defaultsAreNamed() {
        #expect(RuleLimits().maxEvaluationSteps == RuleLimits.defaultMaxEvaluationSteps)
        #expect(RuleLimits().maxValidatedNodes == RuleLimits.defaultMaxValidatedNodes)
    }

    @Test func deeplyNestedExpressionIsRejectedNotCrashing() {
        let deep = String(repeating: "(", count: 500) + "true" + String(repeating: ")", count: 500)
        let found = diagnostics(#"{"rules": {".read": "\#(deep)"}}"#)
        #expect(found.first?.message.contains("nested too deeply") == true)
        let negations = String(repeating: "!", count: 1000) + "true"
        #expect(!diagnostics(#"{"rules": {".read": "\#(negations)"}}"#).isEmpty)
    }

    @Test func deeplyNestedFileIsRejected() {
        let deep = String(repeating: #"{"a":"#, count: 200) + "{}" + String(repeating: "}", count: 200)
        let found = diagnostics(#"{"rules": \#(deep)}"#)
        #expect(found.first?.kind == .syntax)
    }
}
