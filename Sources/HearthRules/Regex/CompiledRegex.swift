/// A `matches()` regular expression, compiled once at load time (docs/protocol/rules.md
/// §3.5).
///
/// `matches` is a search: it succeeds if the pattern matches anywhere in the string, unless
/// `^`/`$` anchor it (docs/protocol/rules.md §3.5; the conformance corpus rates this medium
/// confidence). Only the `i` flag exists.
final class CompiledRegex: Sendable {
    let pattern: String
    let anchoredStart: Bool
    let anchoredEnd: Bool
    let program: RegexProgram

    init(pattern: String, anchoredStart: Bool, anchoredEnd: Bool, program: RegexProgram) {
        self.pattern = pattern
        self.anchoredStart = anchoredStart
        self.anchoredEnd = anchoredEnd
        self.program = program
    }

    /// Work units one match may cost, charged to the evaluation budget before running:
    /// the VM does at most (scalars + 1) × instructions steps.
    func cost(forInputBytes count: Int) -> Int {
        let product = (count + 1).multipliedReportingOverflow(by: program.instructions.count)
        return product.overflow ? Int.max / 2 : product.partialValue / 16 + 1
    }

    func matches(_ input: String) -> Bool {
        PikeVM(program: program, anchoredStart: anchoredStart, anchoredEnd: anchoredEnd).run(input)
    }
}

enum RegexCompiler {
    /// Compiles a regex literal; the only accepted flag is `i` (docs/protocol/rules.md
    /// §3.5).
    static func compile(pattern: String, flags: String) throws(RegexError) -> CompiledRegex {
        guard flags.isEmpty || flags == "i" else {
            throw RegexError(offset: 0, message: "unsupported regular expression flags '\(flags)'; only 'i' is allowed", flagError: true)
        }
        let parsed = try RegexParser.parse(pattern)
        let program = try RegexProgram(parsed.node, caseInsensitive: flags == "i")
        return CompiledRegex(pattern: pattern, anchoredStart: parsed.anchoredStart, anchoredEnd: parsed.anchoredEnd, program: program)
    }
}
