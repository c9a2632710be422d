import HearthTesting
import Foundation
@testable import HearthRules
import Testing

/// Random patterns from a small grammar, matched by the Pike VM and by Foundation's
/// backtracking engine (ICU) as an oracle. On this subset JavaScript, ICU and Firebase
/// agree, so any difference is a bug in ours.
@Suite struct RegexDifferentialTests {
    /// SplitMix64 (HearthTesting): deterministic, so a failure reproduces.
    typealias Generator = SplitMix64

    static func atom(_ random: inout Generator, depth: Int) -> String {
        switch random.below(depth > 2 ? 5 : 7) {
        case 0: return "a"
        case 1: return "b"
        case 2: return "."
        case 3: return ["[ab]", "[^a]", "[a-c]", "\\w", "\\d"][random.below(5)]
        case 4: return "c"
        case 5: return "(" + alternation(&random, depth: depth + 1) + ")"
        default: return "(?:" + concatenation(&random, depth: depth + 1) + ")"
        }
    }

    static func quantified(_ random: inout Generator, depth: Int) -> String {
        let base = atom(&random, depth: depth)
        switch random.below(8) {
        case 0: return base + "*"
        case 1: return base + "+"
        case 2: return base + "?"
        case 3: return base + "{\(random.below(3))}"
        case 4: return base + "{\(random.below(2)),\(2 + random.below(2))}"
        case 5: return base + "{1,}"
        default: return base
        }
    }

    static func concatenation(_ random: inout Generator, depth: Int) -> String {
        (0..<(1 + random.below(3))).map { _ in quantified(&random, depth: depth) }.joined()
    }

    static func alternation(_ random: inout Generator, depth: Int) -> String {
        (0..<(1 + random.below(2))).map { _ in concatenation(&random, depth: depth) }.joined(separator: "|")
    }

    @Test(arguments: [false, true])
    func agreesWithFoundation(caseInsensitive: Bool) throws {
        var random = Generator(seed: caseInsensitive ? 0xCA5E : 0x5EED)
        var checked = 0
        let alphabet: [Character] = caseInsensitive ? ["a", "B", "c", "A", "b"] : ["a", "b", "c", "1", "_"]
        for _ in 0..<400 {
            var body = Self.alternation(&random, depth: 0)
            let anchors = random.below(4)
            if anchors != 0, body.contains("|") { body = "(" + body + ")" }
            let pattern = (anchors & 1 == 1 ? "^" : "") + body + (anchors & 2 == 2 ? "$" : "")
            let ours = try RegexCompiler.compile(pattern: pattern, flags: caseInsensitive ? "i" : "")
            let oracle = try NSRegularExpression(pattern: pattern, options: caseInsensitive ? [.caseInsensitive] : [])
            for _ in 0..<12 {
                let length = random.below(7)
                let input = String((0..<length).map { _ in alphabet[random.below(alphabet.count)] })
                let expected = oracle.firstMatch(in: input, range: NSRange(location: 0, length: (input as NSString).length)) != nil
                #expect(ours.matches(input) == expected, "/\(pattern)/ on \"\(input)\"")
                checked += 1
            }
        }
        #expect(checked == 4800)
    }
}
