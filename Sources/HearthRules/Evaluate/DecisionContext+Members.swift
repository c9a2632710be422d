import HearthJSON

/// Member access on values known only at run time, i.e. under `auth`
/// (docs/protocol/rules.md §3.3, §3.5): a member of null is null, without an error; a
/// missing member is null.
extension DecisionContext {
    static func member(of target: RuntimeValue, _ name: String) throws(EvaluationFailure) -> RuntimeValue {
        switch target {
        case .json(.object(let children)):
            return children[JSONKey(name)].map(RuntimeValue.init) ?? .null
        case .json(.array(let elements)):
            guard let index = Int(name), String(index) == name, elements.indices.contains(index) else { return .null }
            return RuntimeValue(elements[index])
        case .snapshot:
            throw .runtime("a snapshot has no property '\(name)'")
        case .null, .bool, .number, .string, .nonLeaf, .json:
            return .null
        }
    }

    /// `target[key]`: a string key names a member; an integral number is its decimal form.
    static func member(of target: RuntimeValue, key: RuntimeValue) throws(EvaluationFailure) -> RuntimeValue {
        switch key {
        case .string(let name):
            return try member(of: target, name)
        case .number(let number) where number.rounded() == number && abs(number) < 1e15:
            return try member(of: target, String(Int64(number)))
        default:
            if case .snapshot = target { throw .runtime("a snapshot has no computed members") }
            return .null
        }
    }
}
