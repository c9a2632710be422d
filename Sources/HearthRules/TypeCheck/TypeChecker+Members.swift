/// Member access, computed member access and method calls (docs/protocol/rules.md
/// §3.3–§3.5).
extension TypeChecker {
    mutating func inferMember(_ target: Typed, name: String, at offset: Int) -> Typed? {
        switch target.type {
        case .snapshot:
            if SnapshotMethod(rawValue: name) != nil {
                fail(offset, "'\(name)' is a snapshot method; call it as \(name)()")
            } else {
                fail(offset, "no such method or property '\(name)' on a snapshot")
            }
            return nil
        case .query:
            guard let field = QueryField(rawValue: name) else {
                fail(offset, "unknown query field '\(name)'")
                return nil
            }
            return Typed(ir: .queryField(field), type: field.type)
        case .string, .primitive:
            if name == "length" { return Typed(ir: .length(target.ir), type: .number) }
            if StringMethod(rawValue: name) != nil {
                fail(offset, "'\(name)' is a string method; call it as \(name)(…)")
            } else if target.type == .primitive {
                fail(offset, "no such property '\(name)': val() is a primitive; use child('\(name)') to read a child")
            } else {
                fail(offset, "no such property '\(name)' on a string")
            }
            return nil
        case .any:
            if name == "length" { return Typed(ir: .length(target.ir), type: .number) }
            return Typed(ir: .dynamicMember(target.ir, name), type: .any)
        case .boolean, .number, .null, .regex:
            fail(offset, "no such property '\(name)' on a \(target.type.display)")
            return nil
        }
    }

    mutating func inferIndex(_ object: Expr, _ key: Expr, at offset: Int) -> Typed? {
        let target = infer(object)
        guard let target else {
            _ = infer(key)
            return nil
        }
        if target.type == .any {
            guard let keyValue = infer(key) else { return nil }
            guard keyValue.type.isPrimitiveLike || keyValue.type == .any else {
                fail(key.offset, "a \(keyValue.type.display) cannot be used as a member name")
                return nil
            }
            return Typed(ir: .dynamicIndex(target.ir, keyValue.ir), type: .any)
        }
        guard case .string(let name) = key.kind else {
            fail(key.offset, "a computed member name must be a string literal here")
            return nil
        }
        return inferMember(target, name: name, at: key.offset)
    }

    mutating func inferCall(_ callee: Expr, _ arguments: [Expr], at offset: Int) -> Typed? {
        let object: Expr
        let name: String
        let nameOffset: Int
        switch callee.kind {
        case .member(let target, let memberName, let memberOffset):
            object = target
            name = memberName
            nameOffset = memberOffset
        case .index(let target, let key):
            guard case .string(let literal) = key.kind else {
                fail(key.offset, "a computed method name must be a plain string literal")
                return nil
            }
            object = target
            name = literal
            nameOffset = key.offset
        default:
            fail(callee.offset, "only methods can be called")
            return nil
        }
        guard let target = infer(object) else { return nil }
        switch target.type {
        case .snapshot:
            guard let method = SnapshotMethod(rawValue: name) else {
                fail(nameOffset, "unknown snapshot method '\(name)'")
                return nil
            }
            return inferSnapshotCall(target, method, arguments, at: nameOffset)
        case .string, .primitive, .any:
            guard let method = StringMethod(rawValue: name) else {
                if name == "length" {
                    fail(nameOffset, "'length' is a property, not a method; write .length")
                } else {
                    fail(nameOffset, "unknown string method '\(name)'")
                }
                return nil
            }
            return inferStringCall(target, method, arguments, at: nameOffset)
        default:
            fail(nameOffset, "a \(target.type.display) has no method '\(name)'")
            return nil
        }
    }

    private mutating func inferSnapshotCall(_ target: Typed, _ method: SnapshotMethod, _ arguments: [Expr], at offset: Int) -> Typed? {
        if method == .hasChildren {
            return inferHasChildren(target, arguments, at: offset)
        }
        guard let values = inferArguments(arguments, count: method.parameterCount, method: method.rawValue, at: offset) else {
            return nil
        }
        return Typed(ir: .snapshotCall(target.ir, method, values), type: method.resultType)
    }

    /// `hasChildren()` or `hasChildren([...])` with one non-empty array literal of strings
    /// (docs/protocol/rules.md §3.4).
    private mutating func inferHasChildren(_ target: Typed, _ arguments: [Expr], at offset: Int) -> Typed? {
        if arguments.isEmpty {
            return Typed(ir: .snapshotCall(target.ir, .hasChildren, []), type: .boolean)
        }
        guard arguments.count == 1, case .array(let elements) = arguments[0].kind else {
            fail(offset, "hasChildren takes no argument or one array literal of child names")
            return nil
        }
        guard !elements.isEmpty else {
            fail(arguments[0].offset, "hasChildren got an empty array")
            return nil
        }
        var values: [IR] = []
        var failed = false
        for element in elements {
            guard let value = infer(element) else {
                failed = true
                continue
            }
            if value.type == .string || value.type.isFuzzy {
                values.append(value.ir)
            } else {
                fail(element.offset, "hasChildren needs child names (strings), but this is a \(value.type.display)")
                failed = true
            }
        }
        return failed ? nil : Typed(ir: .snapshotCall(target.ir, .hasChildren, values), type: .boolean)
    }

    private mutating func inferStringCall(_ target: Typed, _ method: StringMethod, _ arguments: [Expr], at offset: Int) -> Typed? {
        if method == .matches {
            guard arguments.count == 1 else {
                fail(offset, "matches takes exactly one argument, a regular expression literal")
                return nil
            }
            guard case .regex(let pattern, let flags) = arguments[0].kind else {
                _ = infer(arguments[0])
                fail(arguments[0].offset, "matches() needs a regular expression literal such as /^[a-z]+$/")
                return nil
            }
            do {
                let regex = try RegexCompiler.compile(pattern: pattern, flags: flags)
                return Typed(ir: .matches(target.ir, regex), type: .boolean)
            } catch {
                // The pattern starts one byte after the opening '/'.
                let base = arguments[0].offset + 1
                let where_ = error.flagError ? base + pattern.utf8.count + 1 : base + error.offset
                fail(where_, error.message)
                return nil
            }
        }
        guard let values = inferArguments(arguments, count: method.parameterCount, method: method.rawValue, at: offset) else {
            return nil
        }
        return Typed(ir: .stringCall(target.ir, method, values), type: method.resultType)
    }

    /// Checks arity and that every argument may be a string (all fixed parameters of
    /// snapshot and string methods are strings).
    private mutating func inferArguments(_ arguments: [Expr], count: Int, method: String, at offset: Int) -> [IR]? {
        var values: [IR] = []
        var failed = false
        for argument in arguments {
            guard let value = infer(argument) else {
                failed = true
                continue
            }
            if value.type == .string || value.type.isFuzzy {
                values.append(value.ir)
            } else {
                fail(argument.offset, "\(method)() needs a string argument, but this is a \(value.type.display)")
                failed = true
            }
        }
        if arguments.count != count {
            fail(offset, "\(method)() takes \(count) argument\(count == 1 ? "" : "s"), but got \(arguments.count)")
            return nil
        }
        return failed ? nil : values
    }
}
