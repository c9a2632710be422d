@testable import HearthRules
import Testing

/// The linear-time regex engine behind `matches()` (docs/protocol/rules.md §3.5).
@Suite struct RegexTests {
    struct Match: Sendable, CustomTestStringConvertible {
        let pattern: String
        let flags: String
        let input: String
        let matches: Bool
        init(_ pattern: String, _ input: String, _ matches: Bool, flags: String = "") {
            self.pattern = pattern
            self.flags = flags
            self.input = input
            self.matches = matches
        }
        var testDescription: String { "/\(pattern)/\(flags) on \"\(input)\"" }
    }

    static func regex(_ pattern: String, flags: String = "") -> CompiledRegex {
        do {
            return try RegexCompiler.compile(pattern: pattern, flags: flags)
        } catch {
            fatalError("/\(pattern)/ did not compile: \(error.message)")
        }
    }

    @Test(arguments: [
        // matches() is a search unless anchored.
        Match("bar", "foobarbaz", true),
        Match("^bar", "foobar", false),
        Match("bar$", "barfoo", false),
        Match("^bar$", "bar", true),
        Match("^$", "", true),
        Match("^$", "x", false),
        Match("", "anything", true),
        // Classes and escapes.
        Match("^[a-z]+$", "hello", true),
        Match("^[a-z]+$", "Hello", false),
        Match("^[a-z]+$", "Hello", true, flags: "i"),
        Match("^[^0-9]+$", "abc", true),
        Match("^[^0-9]+$", "ab1", false),
        Match("^[^a-z]$", "A", false, flags: "i"),
        Match("^\\d{3}-\\d{2}-\\d{4}$", "123-45-6789", true),
        Match("^\\d{3}-\\d{2}-\\d{4}$", "123-456-789", false),
        Match("^\\w+$", "snake_case9", true),
        Match("^\\W+$", "!?", true),
        Match("^\\s+$", " \t\n", true),
        Match("^\\S+$", "a b", false),
        Match("^[\\d.]+$", "1.5", true),
        Match("^a\\.b$", "a.b", true),
        Match("^a\\.b$", "axb", false),
        Match("^a.b$", "axb", true),
        Match("^a.b$", "a\nb", false),
        Match("\\{foo}", "{foo}", true),
        Match("^[-a]+$", "-a-", true),
        Match("^[a-]+$", "-a-", true),
        Match("^\\u00e9$", "é", true),
        Match("^\\x41$", "A", true),
        // Groups, alternation, counts.
        Match("^(19|20)\\d\\d$", "1999", true),
        Match("^(19|20)\\d\\d$", "2100", false),
        Match("^(?:ab)+$", "ababab", true),
        Match("^(?:ab)+$", "ababa", false),
        Match("^a{2}$", "aa", true),
        Match("^a{2}$", "aaa", false),
        Match("^a{2,}$", "aaaa", true),
        Match("^a{2,3}$", "aaaa", false),
        Match("^a{0,2}$", "", true),
        Match("^ab?c*$", "acccc", true),
        Match("^ab+?$", "abbb", true),
        Match("^(a|b|c)+$", "abcabc", true),
        Match("cat|dog", "hotdog", true),
        Match("^(cat|dog)$", "dog", true),
        Match("^(cat|dog)$", "hotdog", false),
        Match("^(?:a|b)$", "b", true),
        Match("^(a*)*$", "aaaa", true),
        Match("^(a*)*b$", "aaaa", false),
        // Case-insensitive literals and non-ASCII.
        Match("^ÉTÉ$", "été", true, flags: "i"),
        Match("^straße$", "STRASSE", false, flags: "i"),
        Match("^.$", "😀", true),
    ])
    func matching(_ test: Match) {
        #expect(Self.regex(test.pattern, flags: test.flags).matches(test.input) == test.matches)
    }

    struct Rejected: Sendable, CustomTestStringConvertible {
        let pattern: String
        let flags: String
        init(_ pattern: String, flags: String = "") {
            self.pattern = pattern
            self.flags = flags
        }
        var testDescription: String { "/\(pattern)/\(flags)" }
    }

    /// Outside Firebase's subset, or ambiguous: rejected at load time, never guessed.
    @Test(arguments: [
        Rejected("bar", flags: "g"),
        Rejected("bar", flags: "ig"),
        Rejected("bar", flags: "m"),
        Rejected("(^foo$|bar)"),
        Rejected("^foo|bar$"),
        Rejected("^(foo|)$"),
        Rejected("(|foo)"),
        Rejected("foo||bar"),
        Rejected("a^b"),
        Rejected("a$b"),
        Rejected("(^a)"),
        Rejected("()"),
        Rejected("*a"),
        Rejected("a**"),
        Rejected("a{2}{3}"),
        Rejected("a{3,2}"),
        Rejected("a{1001}"),
        Rejected("a{"),
        Rejected("(a"),
        Rejected("a)"),
        Rejected("[a"),
        Rejected("[]"),
        Rejected("[z-a]"),
        Rejected("[\\d-z]"),
        Rejected("(a)\\1"),
        Rejected("\\bword"),
        Rejected("(?=a)"),
        Rejected("(?<name>a)"),
        Rejected("\\q"),
        Rejected("a\\"),
        Rejected("(((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((a)))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))"),
        Rejected("(a{1000}){1000}"),
    ])
    func rejected(_ test: Rejected) {
        #expect(throws: RegexError.self) {
            try RegexCompiler.compile(pattern: test.pattern, flags: test.flags)
        }
    }

    /// A classic catastrophic-backtracking pattern on 1 MB answers at once: the Pike VM is
    /// linear in the input. Counted in the VM's steps, not timed: at most (scalars + 1) ×
    /// instructions, and ten times the input costs ten times the steps (a backtracking
    /// engine's would grow exponentially and never finish).
    @Test func pathologicalPatternOnOneMegabyte() {
        let regex = Self.regex("^(a+)+$")
        let vm = PikeVM(program: regex.program, anchoredStart: regex.anchoredStart, anchoredEnd: regex.anchoredEnd)
        var results: [Bool] = []
        var steps: [Int] = []
        for count in [100_000, 1_000_000] {
            for input in [String(repeating: "a", count: count) + "b", String(repeating: "a", count: count)] {
                var used = 0
                results.append(vm.run(input, steps: &used))
                #expect(used <= (input.unicodeScalars.count + 1) * regex.program.instructions.count)
                steps.append(used)
            }
        }
        #expect(results == [false, true, false, true])
        #expect(steps[2] <= 10 * (steps[0] + regex.program.instructions.count))
        #expect(steps[3] <= 10 * (steps[1] + regex.program.instructions.count))
        #expect(regex.matches(String(repeating: "a", count: 1_000_000)))
    }

    /// The same inside a rule: the match fits the default budget and denies quickly.
    @Test func pathologicalPatternInARule() {
        let rules = compile(#"{"rules": {"s": {".write": true, ".validate": "newData.val().matches(/^(a+)+$/)"}}}"#)
        let value = JSONValueFactory.string(String(repeating: "a", count: 1_000_000) + "b")
        let decision = rules.canWrite([(path("s"), value)], data: JSONTreeSource(nil), auth: .null, now: testNow)
        #expect(!decision.allowed)
        #expect(decision.explanation.last?.contains("/rules/s/.validate") == true)
        let good = JSONValueFactory.string(String(repeating: "a", count: 1_000_000))
        #expect(rules.canWrite([(path("s"), good)], data: JSONTreeSource(nil), auth: .null, now: testNow).allowed)
    }

    /// Size limits: instruction count and precomputed ε-closure entries.
    @Test func oversizedProgramsAreRejected() {
        #expect(throws: RegexError.self) { try RegexCompiler.compile(pattern: "(a{1000}){11}", flags: "") }
        do {
            _ = try RegexCompiler.compile(pattern: "(a?){1000}", flags: "")
            Issue.record("must be rejected")
        } catch {
            #expect(error.message.contains("too complex"))
        }
        #expect((try? RegexCompiler.compile(pattern: "(a?){300}", flags: "")) != nil)
        #expect((try? RegexCompiler.compile(pattern: "^.{0,1000}$", flags: "")) != nil)
        #expect((try? RegexCompiler.compile(pattern: "[a-z]{1000}", flags: "")) != nil)
    }

    @Test func matchCostIsChargedToTheBudget() {
        let regex = Self.regex("^(a+)+$")
        #expect(regex.cost(forInputBytes: 1_000_000) > 100_000)
        #expect(regex.cost(forInputBytes: 1_000_000) < RuleLimits.defaultMaxEvaluationSteps)
    }
}

import HearthJSON

enum JSONValueFactory {
    static func string(_ text: String) -> JSONValue { .string(text) }
}
