/// The syntax tree of one rule expression, as written (docs/protocol/rules.md §3.5). It
/// carries positions only; names are resolved and types checked by `TypeChecker`, which
/// lowers it to `IR`.
struct Expr: Sendable {
    indirect enum Kind: Sendable {
        case number(Double)
        case string(String)
        case bool(Bool)
        case null
        case regex(pattern: String, flags: String)
        case identifier(String)
        case array([Expr])
        case unary(UnaryOperator, Expr)
        case binary(BinaryOperator, Expr, Expr)
        case logical(LogicalOperator, Expr, Expr)
        case conditional(Expr, Expr, Expr)
        /// `object.name`; `nameOffset` locates the name for messages.
        case member(Expr, name: String, nameOffset: Int)
        /// `object[key]`
        case index(Expr, Expr)
        case call(Expr, [Expr])
    }

    let kind: Kind
    /// Byte offset of the expression's first character within the rule text.
    let offset: Int
    /// Byte offset just past its last character: `offset..<end` is the text the author
    /// wrote for this node (without enclosing parentheses), which coverage reports colour.
    let end: Int
    /// Nodes on the longest path from this one to a leaf (a leaf: 1), bounded by
    /// `Parser.maxExpressionHeight`.
    let height: Int
}

extension Expr.Kind {
    /// The height of the tallest child (0 for a leaf).
    var childHeight: Int {
        switch self {
        case .number, .string, .bool, .null, .regex, .identifier: return 0
        case .array(let items): return items.map(\.height).max() ?? 0
        case .unary(_, let operand), .member(let operand, _, _): return operand.height
        case .binary(_, let left, let right), .logical(_, let left, let right), .index(let left, let right): return max(left.height, right.height)
        case .conditional(let test, let yes, let no): return max(test.height, yes.height, no.height)
        case .call(let callee, let arguments): return max(callee.height, arguments.map(\.height).max() ?? 0)
        }
    }
}

enum UnaryOperator: String, Sendable {
    case not = "!"
    case negate = "-"
}

enum BinaryOperator: String, Sendable {
    case add = "+", subtract = "-", multiply = "*", divide = "/", remainder = "%"
    case less = "<", lessEqual = "<=", greater = ">", greaterEqual = ">="
    case equal = "==", notEqual = "!="

    var isArithmetic: Bool {
        switch self {
        case .subtract, .multiply, .divide, .remainder: return true
        default: return false
        }
    }

    var isOrdering: Bool {
        switch self {
        case .less, .lessEqual, .greater, .greaterEqual: return true
        default: return false
        }
    }
}

enum LogicalOperator: String, Sendable {
    case and = "&&"
    case or = "||"
}
