/// Load-time type checker (docs/protocol/rules.md §3.1, §3.5, §3.6): infers a static type
/// for every node, rejects what Firebase rejects at deploy time, resolves every name, and
/// lowers the syntax tree to `IR`.
///
/// It reports every independent problem in an expression, not just the first: a node
/// whose child failed is skipped silently so that one mistake is not reported many times.
struct TypeChecker {
    /// What a rule expression may refer to.
    struct Scope: Sendable {
        let kind: RuleKind
        /// Wildcard names on the rule's path, outermost first (`["$uid", "$favoriteId"]`).
        let wildcards: [String]
    }

    struct Typed {
        let ir: IR
        let type: StaticType
    }

    let scope: Scope
    private(set) var errors: [ExpressionError] = []
    /// When compiling for coverage: the span (`offset..<end` in the rule text) of every
    /// node wrapped in `IR.probe`, indexed by the probe's number. Nil: no probes.
    private(set) var probeSpans: [ProbeSpan]?

    struct ProbeSpan {
        let range: Range<Int>
        let isBoolean: Bool
    }

    init(scope: Scope) {
        self.scope = scope
    }

    /// Checks a whole rule: it must be statically boolean (docs/protocol/rules.md §3.1).
    /// Every error found in one expression.
    struct Failures: Error {
        let errors: [ExpressionError]
    }

    static func checkRule(_ expression: Expr, scope: Scope) -> Result<IR, Failures> {
        checkRule(expression, scope: scope, probing: false).map(\.ir)
    }

    /// `checkRule`; with `probing`, every node the author wrote is wrapped in
    /// `IR.probe(n, …)` and `probes[n]` is its span in the rule text. Probes whose node the
    /// lowering dropped (the `query` in `query.orderByKey`) have a span but never appear.
    static func checkRule(_ expression: Expr, scope: Scope, probing: Bool) -> Result<(ir: IR, probes: [ProbeSpan]), Failures> {
        var checker = TypeChecker(scope: scope)
        if probing { checker.probeSpans = [] }
        let typed = checker.infer(expression)
        if let typed, checker.errors.isEmpty {
            if typed.type == .boolean { return .success((typed.ir, checker.probeSpans ?? [])) }
            checker.fail(expression.offset, "a rule must be a boolean expression, but this is a \(typed.type.display)")
        }
        return .failure(Failures(errors: checker.errors))
    }

    mutating func fail(_ offset: Int, _ message: String) {
        errors.append(ExpressionError(offset: offset, message: message))
    }

    mutating func infer(_ expression: Expr) -> Typed? {
        guard probeSpans != nil else { return inferNode(expression) }
        guard let typed = inferNode(expression) else { return nil }
        let probe = probeSpans?.count ?? 0
        probeSpans?.append(ProbeSpan(range: expression.offset..<expression.end, isBoolean: typed.type == .boolean))
        return Typed(ir: .probe(probe, typed.ir), type: typed.type)
    }

    private mutating func inferNode(_ expression: Expr) -> Typed? {
        let offset = expression.offset
        switch expression.kind {
        case .number(let value):
            return Typed(ir: .constant(.number(value)), type: .number)
        case .string(let value):
            return Typed(ir: .constant(.string(value)), type: .string)
        case .bool(let value):
            return Typed(ir: .constant(.bool(value)), type: .boolean)
        case .null:
            return Typed(ir: .constant(.null), type: .null)
        case .regex:
            fail(offset, "a regular expression literal is only allowed as the argument of matches()")
            return nil
        case .array:
            fail(offset, "an array literal is only allowed as the argument of hasChildren()")
            return nil
        case .identifier(let name):
            return resolve(name, at: offset)
        case .unary(let op, let operand):
            return inferUnary(op, operand, at: offset)
        case .binary(let op, let left, let right):
            return inferBinary(op, left, right, at: offset)
        case .logical(let op, let left, let right):
            let lhs = infer(left)
            let rhs = infer(right)
            guard let lhs, let rhs else { return nil }
            guard requireBoolean(lhs, at: left.offset, "the left operand of \(op.rawValue)"),
                  requireBoolean(rhs, at: right.offset, "the right operand of \(op.rawValue)")
            else { return nil }
            return Typed(ir: op == .and ? .and(lhs.ir, rhs.ir) : .or(lhs.ir, rhs.ir), type: .boolean)
        case .conditional(let test, let consequent, let alternate):
            return inferConditional(test, consequent, alternate)
        case .member(let object, let name, let nameOffset):
            guard let target = infer(object) else { return nil }
            return inferMember(target, name: name, at: nameOffset)
        case .index(let object, let key):
            return inferIndex(object, key, at: offset)
        case .call(let callee, let arguments):
            return inferCall(callee, arguments, at: offset)
        }
    }

    private mutating func requireBoolean(_ typed: Typed, at offset: Int, _ what: String) -> Bool {
        if typed.type == .boolean { return true }
        fail(offset, "\(what) must be a boolean, but this is a \(typed.type.display)")
        return false
    }

    private mutating func resolve(_ name: String, at offset: Int) -> Typed? {
        if name.hasPrefix("$") {
            guard let index = scope.wildcards.firstIndex(of: name) else {
                fail(offset, "unknown variable '\(name)': no \(name) wildcard on this rule's path")
                return nil
            }
            return Typed(ir: .wildcard(index), type: .string)
        }
        switch RuleVariable(rawValue: name) {
        case .auth: return Typed(ir: .variable(.auth), type: .any)
        case .root: return Typed(ir: .variable(.root), type: .snapshot)
        case .data: return Typed(ir: .variable(.data), type: .snapshot)
        case .now: return Typed(ir: .variable(.now), type: .number)
        case .newData:
            guard scope.kind != .read else {
                fail(offset, "newData is not available in .read rules")
                return nil
            }
            return Typed(ir: .variable(.newData), type: .snapshot)
        case .query:
            guard scope.kind == .read else {
                fail(offset, "query is only available in .read rules")
                return nil
            }
            return Typed(ir: .variable(.query), type: .query)
        case nil:
            fail(offset, "unknown variable '\(name)'")
            return nil
        }
    }

    private mutating func inferUnary(_ op: UnaryOperator, _ operand: Expr, at offset: Int) -> Typed? {
        guard let value = infer(operand) else { return nil }
        switch op {
        case .not:
            guard requireBoolean(value, at: operand.offset, "the operand of '!'") else { return nil }
            return Typed(ir: .not(value.ir), type: .boolean)
        case .negate:
            guard value.type == .number || value.type.isFuzzy else {
                fail(offset, "unary '-' needs a number, but this is a \(value.type.display)")
                return nil
            }
            return Typed(ir: .negate(value.ir), type: .number)
        }
    }

    private mutating func inferBinary(_ op: BinaryOperator, _ left: Expr, _ right: Expr, at offset: Int) -> Typed? {
        let lhs = infer(left)
        let rhs = infer(right)
        guard let lhs, let rhs else { return nil }
        let sides = [(lhs, left.offset, "left"), (rhs, right.offset, "right")]
        switch op {
        case .add:
            for (side, sideOffset, name) in sides where !(side.type == .string || side.type == .number || side.type.isFuzzy) {
                fail(sideOffset, "the \(name) operand of '+' must be a number or a string, but this is a \(side.type.display)")
                return nil
            }
            let type: StaticType
            if lhs.type == .string || rhs.type == .string {
                type = .string
            } else if lhs.type == .number && rhs.type == .number {
                type = .number
            } else {
                type = .primitive
            }
            return Typed(ir: .arithmetic(op, lhs.ir, rhs.ir), type: type)
        case .subtract, .multiply, .divide, .remainder:
            for (side, sideOffset, name) in sides where !(side.type == .number || side.type.isFuzzy) {
                fail(sideOffset, "the \(name) operand of '\(op.rawValue)' must be a number, but this is a \(side.type.display)")
                return nil
            }
            return Typed(ir: .arithmetic(op, lhs.ir, rhs.ir), type: .number)
        case .equal, .notEqual:
            for (side, sideOffset, name) in sides where !(side.type.isPrimitiveLike || side.type == .any) {
                let hint = side.type == .snapshot ? "; compare its val(), or use exists()" : ""
                fail(sideOffset, "the \(name) operand of '\(op.rawValue)' cannot be compared: it is a \(side.type.display)\(hint)")
                return nil
            }
            return Typed(ir: .equal(lhs.ir, rhs.ir, negated: op == .notEqual), type: .boolean)
        case .less, .lessEqual, .greater, .greaterEqual:
            for (side, sideOffset, name) in sides where !(side.type == .string || side.type == .number || side.type == .null || side.type.isFuzzy) {
                fail(sideOffset, "the \(name) operand of '\(op.rawValue)' must be a number or a string, but this is a \(side.type.display)")
                return nil
            }
            if !lhs.type.isFuzzy && !rhs.type.isFuzzy && lhs.type != rhs.type {
                fail(offset, "'\(op.rawValue)' compares a \(lhs.type.display) with a \(rhs.type.display)")
                return nil
            }
            return Typed(ir: .ordering(op, lhs.ir, rhs.ir), type: .boolean)
        }
    }

    private mutating func inferConditional(_ test: Expr, _ consequent: Expr, _ alternate: Expr) -> Typed? {
        let condition = infer(test)
        let yes = infer(consequent)
        let no = infer(alternate)
        guard let condition, let yes, let no else { return nil }
        guard requireBoolean(condition, at: test.offset, "the condition of '?:'") else { return nil }
        let type: StaticType
        if yes.type == no.type {
            type = yes.type
        } else if yes.type.isPrimitiveLike && no.type.isPrimitiveLike {
            type = .primitive
        } else {
            type = .any
        }
        return Typed(ir: .conditional(condition.ir, yes.ir, no.ir), type: type)
    }
}
