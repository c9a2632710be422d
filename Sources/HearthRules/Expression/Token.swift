/// One token of a rule expression (docs/protocol/rules.md §3.5: a JavaScript-like subset).
struct Token: Sendable, Equatable {
    enum Kind: Sendable, Equatable {
        case identifier(String)
        case number(Double)
        case string(String)
        /// `/pattern/flags`; the pattern is kept raw and compiled by the regex parser.
        case regex(pattern: String, flags: String)
        case punct(Punct)
        case end
    }

    enum Punct: String, Sendable, Equatable, CaseIterable {
        case leftParen = "(", rightParen = ")", leftBracket = "[", rightBracket = "]"
        case dot = ".", comma = ",", question = "?", colon = ":"
        case not = "!", plus = "+", minus = "-", star = "*", slash = "/", percent = "%"
        case less = "<", lessEqual = "<=", greater = ">", greaterEqual = ">="
        case equal = "==", notEqual = "!=", strictEqual = "===", strictNotEqual = "!=="
        case and = "&&", or = "||"
        // Lexed only to give a precise error: none of these is part of the language.
        case assign = "=", semicolon = ";", power = "**", bitAnd = "&", bitOr = "|", bitXor = "^", tilde = "~"
        case leftBrace = "{", rightBrace = "}"
    }

    let kind: Kind
    /// Byte offsets of the token in the expression text, `start..<end`.
    let start: Int
    let end: Int
}

extension Token.Kind {
    var display: String {
        switch self {
        case .identifier(let name): return "'\(name)'"
        case .number: return "a number"
        case .string: return "a string"
        case .regex: return "a regular expression"
        case .punct(let punct): return "'\(punct.rawValue)'"
        case .end: return "end of expression"
        }
    }
}
