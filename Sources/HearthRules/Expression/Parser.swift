/// Recursive-descent parser for rule expressions (docs/protocol/rules.md §3.5), with
/// JavaScript precedence: `?:` < `||` < `&&` < equality < ordering < `+ -` < `* / %` <
/// unary `! -` < member, index and call. `==`/`===` (and `!=`/`!==`) parse to the same
/// strict operator (§3.5). Everything outside the subset (assignment, `;`, `**`, bitwise
/// operators, unary `+`) is a syntax error with its position.
struct Parser {
    /// Deeper nesting is rejected so that hostile rules cannot exhaust the stack.
    static let maxNestingDepth = 128
    /// The most nodes on one path from an expression's root to a leaf. A chain such as
    /// `a || b || c ...` nests without parentheses (each operator holds the chain before
    /// it), and the type checker and the evaluator recurse once or twice per level, so a
    /// chain of thousands would exhaust the stack; longer ones are refused.
    static let maxExpressionHeight = 512

    private let tokens: [Token]
    private var position = 0
    private var depth = 0
    /// End offset of the last token consumed: where the node just parsed ends.
    private var lastEnd = 0

    private init(tokens: [Token]) {
        self.tokens = tokens
    }

    static func parse(_ text: String) throws(ExpressionError) -> Expr {
        let tokens = try Lexer.tokenize(text)
        var parser = Parser(tokens: tokens)
        if parser.current.kind == .end {
            throw ExpressionError(offset: 0, message: "empty expression")
        }
        let expression = try parser.parseConditional()
        guard parser.current.kind == .end else {
            throw parser.unexpected(expecting: "end of expression")
        }
        return expression
    }

    private var current: Token { tokens[position] }

    /// A node starting at `start` and ending with the last token consumed; refused past
    /// `maxExpressionHeight`.
    private func node(_ kind: Expr.Kind, from start: Int) throws(ExpressionError) -> Expr {
        let height = kind.childHeight + 1
        guard height <= Self.maxExpressionHeight else {
            throw ExpressionError(offset: start, message: "expression too large: more than \(Self.maxExpressionHeight) operations inside one another")
        }
        return Expr(kind: kind, offset: start, end: lastEnd, height: height)
    }

    private mutating func advance() -> Token {
        let token = tokens[position]
        if position < tokens.count - 1 { position += 1 }
        lastEnd = token.end
        return token
    }

    private func isPunct(_ punct: Token.Punct) -> Bool {
        current.kind == .punct(punct)
    }

    private mutating func expect(_ punct: Token.Punct) throws(ExpressionError) {
        guard isPunct(punct) else { throw unexpected(expecting: "'\(punct.rawValue)'") }
        _ = advance()
    }

    private func unexpected(expecting: String) -> ExpressionError {
        let token = current
        switch token.kind {
        case .punct(.assign):
            return ExpressionError(offset: token.start, message: "assignment is not allowed; use '==' to compare")
        case .punct(.semicolon):
            return ExpressionError(offset: token.start, message: "a rule is a single expression; ';' is not allowed")
        case .punct(.power):
            return ExpressionError(offset: token.start, message: "the '**' operator is not supported")
        case .punct(.bitAnd), .punct(.bitOr), .punct(.bitXor), .punct(.tilde):
            return ExpressionError(offset: token.start, message: "bitwise operators are not supported")
        default:
            return ExpressionError(offset: token.start, message: "unexpected \(token.kind.display), expected \(expecting)")
        }
    }

    private mutating func enter() throws(ExpressionError) {
        depth += 1
        if depth > Self.maxNestingDepth {
            throw ExpressionError(offset: current.start, message: "expression nested too deeply")
        }
    }

    // MARK: - Precedence levels

    private mutating func parseConditional() throws(ExpressionError) -> Expr {
        try enter()
        defer { depth -= 1 }
        let test = try parseOr()
        guard isPunct(.question) else { return test }
        _ = advance()
        let consequent = try parseConditional()
        try expect(.colon)
        let alternate = try parseConditional()
        return try node(.conditional(test, consequent, alternate), from: test.offset)
    }

    private mutating func parseOr() throws(ExpressionError) -> Expr {
        var left = try parseAnd()
        while isPunct(.or) {
            _ = advance()
            let right = try parseAnd()
            left = try node(.logical(.or, left, right), from: left.offset)
        }
        return left
    }

    private mutating func parseAnd() throws(ExpressionError) -> Expr {
        var left = try parseEquality()
        while isPunct(.and) {
            _ = advance()
            let right = try parseEquality()
            left = try node(.logical(.and, left, right), from: left.offset)
        }
        return left
    }

    private mutating func parseEquality() throws(ExpressionError) -> Expr {
        var left = try parseOrdering()
        while true {
            let op: BinaryOperator
            switch current.kind {
            case .punct(.equal), .punct(.strictEqual): op = .equal
            case .punct(.notEqual), .punct(.strictNotEqual): op = .notEqual
            default: return left
            }
            _ = advance()
            let right = try parseOrdering()
            left = try node(.binary(op, left, right), from: left.offset)
        }
    }

    private mutating func parseOrdering() throws(ExpressionError) -> Expr {
        var left = try parseAdditive()
        while true {
            let op: BinaryOperator
            switch current.kind {
            case .punct(.less): op = .less
            case .punct(.lessEqual): op = .lessEqual
            case .punct(.greater): op = .greater
            case .punct(.greaterEqual): op = .greaterEqual
            default: return left
            }
            _ = advance()
            let right = try parseAdditive()
            left = try node(.binary(op, left, right), from: left.offset)
        }
    }

    private mutating func parseAdditive() throws(ExpressionError) -> Expr {
        var left = try parseMultiplicative()
        while true {
            let op: BinaryOperator
            switch current.kind {
            case .punct(.plus): op = .add
            case .punct(.minus): op = .subtract
            default: return left
            }
            _ = advance()
            let right = try parseMultiplicative()
            left = try node(.binary(op, left, right), from: left.offset)
        }
    }

    private mutating func parseMultiplicative() throws(ExpressionError) -> Expr {
        var left = try parseUnary()
        while true {
            let op: BinaryOperator
            switch current.kind {
            case .punct(.star): op = .multiply
            case .punct(.slash): op = .divide
            case .punct(.percent): op = .remainder
            default: return left
            }
            _ = advance()
            let right = try parseUnary()
            left = try node(.binary(op, left, right), from: left.offset)
        }
    }

    private mutating func parseUnary() throws(ExpressionError) -> Expr {
        let token = current
        switch token.kind {
        case .punct(.not), .punct(.minus):
            try enter()
            defer { depth -= 1 }
            _ = advance()
            let operand = try parseUnary()
            return try node(.unary(token.kind == .punct(.not) ? .not : .negate, operand), from: token.start)
        case .punct(.plus):
            throw ExpressionError(offset: token.start, message: "unary '+' is not supported")
        default:
            return try parsePostfix()
        }
    }

    private mutating func parsePostfix() throws(ExpressionError) -> Expr {
        var expression = try parsePrimary()
        var links = 0
        while true {
            links += 1
            if links > Self.maxNestingDepth {
                throw ExpressionError(offset: current.start, message: "expression nested too deeply")
            }
            switch current.kind {
            case .punct(.dot):
                _ = advance()
                guard case .identifier(let name) = current.kind else {
                    throw unexpected(expecting: "a property or method name after '.'")
                }
                let nameToken = advance()
                expression = try node(.member(expression, name: name, nameOffset: nameToken.start), from: expression.offset)
            case .punct(.leftBracket):
                _ = advance()
                let key = try parseConditional()
                try expect(.rightBracket)
                expression = try node(.index(expression, key), from: expression.offset)
            case .punct(.leftParen):
                _ = advance()
                let arguments = try parseList(closing: .rightParen)
                expression = try node(.call(expression, arguments), from: expression.offset)
            default:
                return expression
            }
        }
    }

    private mutating func parseList(closing: Token.Punct) throws(ExpressionError) -> [Expr] {
        var items: [Expr] = []
        if isPunct(closing) {
            _ = advance()
            return items
        }
        while true {
            items.append(try parseConditional())
            if isPunct(closing) {
                _ = advance()
                return items
            }
            try expect(.comma)
        }
    }

    private mutating func parsePrimary() throws(ExpressionError) -> Expr {
        let token = current
        switch token.kind {
        case .number(let value):
            _ = advance()
            return try node(.number(value), from: token.start)
        case .string(let value):
            _ = advance()
            return try node(.string(value), from: token.start)
        case .regex(let pattern, let flags):
            _ = advance()
            return try node(.regex(pattern: pattern, flags: flags), from: token.start)
        case .identifier(let name):
            _ = advance()
            switch name {
            case "true": return try node(.bool(true), from: token.start)
            case "false": return try node(.bool(false), from: token.start)
            case "null": return try node(.null, from: token.start)
            default: return try node(.identifier(name), from: token.start)
            }
        case .punct(.leftParen):
            try enter()
            defer { depth -= 1 }
            _ = advance()
            let inner = try parseConditional()
            try expect(.rightParen)
            return inner
        case .punct(.leftBracket):
            try enter()
            defer { depth -= 1 }
            _ = advance()
            let elements = try parseList(closing: .rightBracket)
            return try node(.array(elements), from: token.start)
        default:
            throw unexpected(expecting: "a value")
        }
    }
}
