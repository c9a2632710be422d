import HearthJSON
@testable import HearthRules
import Testing

extension ConformanceCase: CustomTestStringConvertible {
    public var testDescription: String { id }
}

/// The shared corpus (Fixtures/SOURCE.md): every case must pass, every invalid file must be
/// rejected, every valid file must load.
@Suite struct ConformanceTests {
    @Test func corpusSizes() {
        #expect(Fixtures.cases.count == 368)
        #expect(Fixtures.rulesFiles("invalid-rules").count == 42)
        #expect(Fixtures.rulesFiles("valid-rules").count == 14)
    }

    @Test(arguments: Fixtures.cases)
    func evaluationCase(_ testCase: ConformanceCase) {
        let result = testCase.run()
        #expect(result.passed, "\(result.detail)")
    }

    @Test(arguments: Fixtures.rulesFiles("invalid-rules"))
    func invalidRulesAreRejected(_ file: Fixtures.RulesFile) {
        var rejected = false
        do {
            if case .string(let text) = file.rules {
                _ = try RuleSet.compile(text)
            } else {
                _ = try RuleSet.compile(json: file.rules)
            }
        } catch {
            rejected = true
            #expect(!error.diagnostics.isEmpty)
        }
        #expect(rejected, "\(file.id) must be rejected")
    }

    @Test(arguments: Fixtures.rulesFiles("valid-rules"))
    func validRulesLoad(_ file: Fixtures.RulesFile) {
        do {
            if case .string(let text) = file.rules {
                _ = try RuleSet.compile(text)
            } else {
                _ = try RuleSet.compile(json: file.rules)
            }
        } catch {
            Issue.record("\(file.id) must load: \(error)")
        }
    }

    /// The library runners the CLI calls give the same verdicts.
    @Test func libraryRunners() {
        let cases = runConformance(casesJSON: Fixtures.bytes("cases"))
        #expect(cases.summary == "368 passed, 0 failed")
        #expect(checkRulesCorpus(json: Fixtures.bytes("invalid-rules"), expectValid: false).summary == "42 passed, 0 failed")
        #expect(checkRulesCorpus(json: Fixtures.bytes("valid-rules"), expectValid: true).summary == "14 passed, 0 failed")
        // Asking the opposite of what a file holds fails every entry.
        #expect(checkRulesCorpus(json: Fixtures.bytes("valid-rules"), expectValid: false).failedCount == 14)
    }
}
