/// The expression evaluator: operators and variables (docs/protocol/rules.md §3.3, §3.5).
/// Members, snapshot and string methods live in the sibling files.
extension DecisionContext {
    mutating func evaluate(_ ir: IR, _ frame: Frame) throws(EvaluationFailure) -> RuntimeValue {
        if case .probe(let site, let inner) = ir { return try probe(site, inner, frame) }
        try charge(1)
        switch ir {
        case .constant(let value):
            return value
        case .variable(let variable):
            return try value(of: variable, frame)
        case .wildcard(let index):
            return .string(frame.captures[index])
        case .queryField(let field):
            return queryValue(field)
        case .not(let operand):
            return .bool(!(try boolean(operand, frame)))
        case .negate(let operand):
            guard case .number(let number) = try evaluate(operand, frame) else {
                throw .runtime("unary '-' needs a number")
            }
            return .number(-number)
        case .arithmetic(let op, let left, let right):
            let lhs = try evaluate(left, frame)
            let rhs = try evaluate(right, frame)
            return try arithmetic(op, lhs, rhs)
        case .equal(let left, let right, let negated):
            let lhs = try evaluate(left, frame)
            let rhs = try evaluate(right, frame)
            return .bool(try Self.strictEquals(lhs, rhs) != negated)
        case .ordering(let op, let left, let right):
            let lhs = try evaluate(left, frame)
            let rhs = try evaluate(right, frame)
            return .bool(try Self.order(op, lhs, rhs))
        case .and(let left, let right):
            // Short-circuit: an error on the untaken side is never raised
            // (docs/protocol/rules.md §3.2; the conformance corpus rates this medium
            // confidence).
            guard try boolean(left, frame) else { return .bool(false) }
            return .bool(try boolean(right, frame))
        case .or(let left, let right):
            if try boolean(left, frame) { return .bool(true) }
            return .bool(try boolean(right, frame))
        case .conditional(let test, let consequent, let alternate):
            return try boolean(test, frame) ? evaluate(consequent, frame) : evaluate(alternate, frame)
        case .dynamicMember(let object, let name):
            return try Self.member(of: evaluate(object, frame), name)
        case .dynamicIndex(let object, let key):
            let target = try evaluate(object, frame)
            return try Self.member(of: target, key: evaluate(key, frame))
        case .length(let object):
            guard case .string(let text) = try evaluate(object, frame) else {
                throw .runtime("length of a value that is not a string")
            }
            return .number(Double(text.utf16.count))
        case .snapshotCall(let object, let method, let arguments):
            return try callSnapshot(object, method, arguments, frame)
        case .stringCall(let object, let method, let arguments):
            return try callString(object, method, arguments, frame)
        case .matches(let object, let regex):
            guard case .string(let text) = try evaluate(object, frame) else {
                throw .runtime("matches() called on a value that is not a string")
            }
            try charge(regex.cost(forInputBytes: text.utf8.count))
            return .bool(regex.matches(text))
        case .probe(let site, let inner):
            return try probe(site, inner, frame)
        }
    }

    /// A coverage probe: evaluates `inner` without extra charge and records its result,
    /// or `error` for a runtime error (budget and data failures end the decision
    /// uncounted).
    private mutating func probe(_ site: Int, _ inner: IR, _ frame: Frame) throws(EvaluationFailure) -> RuntimeValue {
        do {
            let value = try evaluate(inner, frame)
            hits?.record(site, CoverageResult(value))
            return value
        } catch {
            if case .runtime = error { hits?.record(site, .error) }
            throw error
        }
    }

    mutating func boolean(_ ir: IR, _ frame: Frame) throws(EvaluationFailure) -> Bool {
        guard case .bool(let flag) = try evaluate(ir, frame) else {
            throw .runtime("expected a boolean")
        }
        return flag
    }

    private mutating func value(of variable: RuleVariable, _ frame: Frame) throws(EvaluationFailure) -> RuntimeValue {
        switch variable {
        case .root, .data, .now:
            usedDataOrTime = true
            usedStoredDataOrTime = true
        case .newData: usedDataOrTime = true
        case .auth, .query: break
        }
        switch variable {
        case .auth: return auth
        case .now: return .number(now)
        case .root: return .snapshot(SnapshotRef(view: .before, path: .root))
        case .data: return .snapshot(SnapshotRef(view: .before, path: frame.path))
        case .newData:
            guard after != nil else { throw .runtime("newData is only defined for writes") }
            return .snapshot(SnapshotRef(view: .after, path: frame.path))
        case .query:
            throw .runtime("query is not a value; use one of its fields")
        }
    }

    private func queryValue(_ field: QueryField) -> RuntimeValue {
        let query = self.query ?? RuleQuery()
        switch field {
        case .orderByKey: return .bool(query.orderBy == nil || query.orderBy == .key)
        case .orderByValue: return .bool(query.orderBy == .value)
        case .orderByPriority: return .bool(query.orderBy == .priority)
        case .orderByChild:
            if case .child(let name)? = query.orderBy { return .string(name) }
            return .null
        case .startAt: return query.startAt.map(RuntimeValue.init) ?? .null
        case .endAt: return query.endAt.map(RuntimeValue.init) ?? .null
        case .equalTo: return query.equalTo.map(RuntimeValue.init) ?? .null
        case .limitToFirst: return query.limitToFirst.map { .number(Double($0)) } ?? .null
        case .limitToLast: return query.limitToLast.map { .number(Double($0)) } ?? .null
        }
    }

    /// `+ - * / %` (docs/protocol/rules.md §3.5): `+` adds numbers or concatenates when
    /// either side is a string; the others take numbers only; `x / 0` is NaN
    /// (docs/protocol/rules.md §3.5).
    private mutating func arithmetic(_ op: BinaryOperator, _ lhs: RuntimeValue, _ rhs: RuntimeValue) throws(EvaluationFailure) -> RuntimeValue {
        if op == .add {
            let text: String
            switch (lhs, rhs) {
            case (.number(let a), .number(let b)): return .number(a + b)
            case (.string(let a), .string(let b)): text = a + b
            case (.string(let a), .number(let b)): text = a + JavaScriptNumber.string(b)
            case (.number(let a), .string(let b)): text = JavaScriptNumber.string(a) + b
            default: throw .runtime("'+' needs numbers or strings, not \(lhs.typeName) and \(rhs.typeName)")
            }
            try charge(text.utf8.count / 16)
            return .string(text)
        }
        guard case .number(let a) = lhs, case .number(let b) = rhs else {
            throw .runtime("'\(op.rawValue)' needs numbers, not \(lhs.typeName) and \(rhs.typeName)")
        }
        switch op {
        case .subtract: return .number(a - b)
        case .multiply: return .number(a * b)
        case .divide: return .number(b == 0 ? .nan : a / b)
        case .remainder: return .number(a.truncatingRemainder(dividingBy: b))
        default: throw .runtime("unexpected operator \(op.rawValue)")
        }
    }

    /// Strict equality, both spellings (docs/protocol/rules.md §3.5): no coercion; NaN
    /// equals nothing; the non-leaf sentinel equals nothing; strings compare by their exact
    /// bytes.
    static func strictEquals(_ lhs: RuntimeValue, _ rhs: RuntimeValue) throws(EvaluationFailure) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case (.bool(let a), .bool(let b)): return a == b
        case (.number(let a), .number(let b)): return a == b
        case (.string(let a), .string(let b)): return a.hasSameBytes(as: b)
        case (.json(let a), .json(let b)): return a == b
        case (.snapshot, _), (_, .snapshot): throw .runtime("a snapshot cannot be compared")
        default: return false
        }
    }

    /// `< <= > >=` (docs/protocol/rules.md §3.5): two numbers, or two strings compared by
    /// UTF-16 code units as JavaScript does; anything else is a runtime error. NaN compares
    /// false.
    static func order(_ op: BinaryOperator, _ lhs: RuntimeValue, _ rhs: RuntimeValue) throws(EvaluationFailure) -> Bool {
        switch (lhs, rhs) {
        case (.number(let a), .number(let b)):
            switch op {
            case .less: return a < b
            case .lessEqual: return a <= b
            case .greater: return a > b
            default: return a >= b
            }
        case (.string(let a), .string(let b)):
            let less = a.utf16.lexicographicallyPrecedes(b.utf16)
            let equal = !less && a.hasSameBytes(as: b)
            switch op {
            case .less: return less
            case .lessEqual: return less || equal
            case .greater: return !less && !equal
            default: return !less
            }
        default:
            throw .runtime("'\(op.rawValue)' needs two numbers or two strings, not \(lhs.typeName) and \(rhs.typeName)")
        }
    }
}
