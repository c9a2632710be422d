/// One reason a rules file was rejected at load time (docs/protocol/rules.md §3.6).
public struct RuleDiagnostic: Sendable, Hashable, CustomStringConvertible {
    /// The layer that found the problem (the corpus's `kind` of invalid rules).
    public enum Kind: String, Sendable, Hashable {
        /// The file is not (relaxed) JSON: unclosed brace, unquoted key, unterminated comment…
        case syntax
        /// The JSON is fine but its shape is not a rules file: unknown `.keys`, two
        /// wildcards on one level, a `.read` that is a number, a null node…
        case structure
        /// A rule expression does not parse or does not type-check.
        case expression
    }

    public var kind: Kind
    /// Where in the rules tree, e.g. `/rules/users/$uid/.read`; `""` for the file itself.
    public var rulePath: String
    /// 1-based line in the file; 0 when the rules were given as an already parsed
    /// `JSONValue` (then `column` counts within the expression, for expression errors).
    public var line: Int
    /// 1-based column, in Unicode scalars.
    public var column: Int
    public var message: String

    public init(kind: Kind, rulePath: String, line: Int, column: Int, message: String) {
        self.kind = kind
        self.rulePath = rulePath
        self.line = line
        self.column = column
        self.message = message
    }

    /// `line 3, column 12: /rules/users/$uid/.read: unknown variable 'foo'`
    public var description: String {
        let place = line > 0 ? "line \(line), column \(column): " : (column > 0 ? "column \(column): " : "")
        let path = rulePath.isEmpty ? "" : "\(rulePath): "
        return place + path + message
    }
}

/// A rules file that cannot be loaded: every problem found, in file order
/// (docs/protocol/rules.md §3.6). The deploy is rejected as a whole.
public struct RulesCompileError: Error, Sendable, CustomStringConvertible {
    public var diagnostics: [RuleDiagnostic]

    public init(diagnostics: [RuleDiagnostic]) {
        self.diagnostics = diagnostics
    }

    public var description: String {
        diagnostics.map(\.description).joined(separator: "\n")
    }
}
