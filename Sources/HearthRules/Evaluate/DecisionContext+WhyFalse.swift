/// Why a `.validate` rule was false, in words a developer can act on: the fields
/// of the written data it found missing or whose check failed. Only `newData` is named,
/// never `data` or `root`: the writer sent the new data, while the stored data may be
/// data they cannot read, so nothing of it (not even whether a child exists) is told.
extension DecisionContext {
    /// `whyFalse` for a rule that was false; nil for a constant rule, or when telling would
    /// itself fail (the budget ran out).
    mutating func reason(_ rule: CompiledRule, _ frame: Frame) -> String? {
        guard case .expression(let ir) = rule.body else { return nil }
        // Re-evaluating to explain must not count as coverage.
        return try? whyFalse(hits == nil ? ir : ir.withoutProbes, frame)
    }

    /// The most field names one reason lists.
    static let maxReasonFields = 8

    /// For an expression that evaluated false at `frame`: the first false conjunct's
    /// reason, or nil when it names no field of the new data.
    mutating func whyFalse(_ ir: IR, _ frame: Frame) throws(EvaluationFailure) -> String? {
        switch ir {
        case .and(let left, let right):
            // A conjunct that fails at run time is the false one too
            // (docs/protocol/rules.md §3.2).
            return (try? boolean(left, frame)) == true ? try whyFalse(right, frame) : try whyFalse(left, frame)
        case .snapshotCall(let object, let method, let arguments) where method == .hasChildren || method == .hasChild:
            guard let base = Self.newDataPath(object), !arguments.isEmpty,
                  case .snapshot(let snapshot) = try evaluate(object, frame) else { break }
            var missing: [String] = []
            for argument in arguments {
                guard case .string(let name) = try evaluate(argument, frame) else { return nil }
                if !(try exists(snapshot.child(name))) { missing.append((base + [name]).joined(separator: "/")) }
            }
            guard !missing.isEmpty else { break }
            return (missing.count == 1 ? "missing field " : "missing fields ") + Self.list(missing)
        default:
            break
        }
        var fields: [String] = []
        Self.newDataFields(ir, into: &fields)
        guard !fields.isEmpty else { return nil }
        return (fields.count == 1 ? "the check of field " : "the check of fields ") + Self.list(fields) + " failed"
    }

    private static func list(_ names: [String]) -> String {
        let shown = names.prefix(maxReasonFields).map { "'\($0)'" }.joined(separator: ", ")
        return names.count > maxReasonFields ? shown + " and \(names.count - maxReasonFields) more" : shown
    }

    /// The keys below the validated node when `ir` is `newData` followed by `child(...)`
    /// calls with constant names; nil for anything else.
    static func newDataPath(_ ir: IR) -> [String]? {
        switch ir {
        case .variable(.newData):
            return []
        case .snapshotCall(let object, .child, let arguments):
            guard let base = newDataPath(object), arguments.count == 1, case .constant(.string(let name)) = arguments[0] else { return nil }
            return base + [name]
        default:
            return nil
        }
    }

    /// Every field of the new data `ir` reads (the longest `newData.child(...)` chains), in
    /// order of appearance, once each.
    static func newDataFields(_ ir: IR, into fields: inout [String]) {
        if let path = newDataPath(ir), !path.isEmpty {
            let name = path.joined(separator: "/")
            if !fields.contains(name) { fields.append(name) }
            return
        }
        switch ir {
        case .constant, .variable, .wildcard, .queryField:
            return
        case .probe(_, let inner):
            newDataFields(inner, into: &fields)
        case .not(let operand), .negate(let operand), .length(let operand), .matches(let operand, _), .dynamicMember(let operand, _):
            newDataFields(operand, into: &fields)
        case .arithmetic(_, let left, let right), .equal(let left, let right, _), .ordering(_, let left, let right),
             .and(let left, let right), .or(let left, let right), .dynamicIndex(let left, let right):
            newDataFields(left, into: &fields)
            newDataFields(right, into: &fields)
        case .conditional(let test, let consequent, let alternate):
            for part in [test, consequent, alternate] { newDataFields(part, into: &fields) }
        case .snapshotCall(let object, _, let arguments), .stringCall(let object, _, let arguments):
            newDataFields(object, into: &fields)
            for argument in arguments { newDataFields(argument, into: &fields) }
        }
    }
}
