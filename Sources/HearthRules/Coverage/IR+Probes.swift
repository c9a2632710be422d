/// Rewriting the probes of a coverage compile.
extension IR {
    /// The same tree with each probe's number replaced by `renumber(old)`, visiting outer
    /// probes before inner ones and left before right (the order sites are listed in).
    func renumberingProbes(_ renumber: (Int) -> Int) -> IR {
        switch self {
        case .probe(let number, let inner):
            let site = renumber(number)
            return .probe(site, inner.renumberingProbes(renumber))
        default:
            return mapChildren { $0.renumberingProbes(renumber) }
        }
    }

    /// The same tree without probes (what a plain compile produces).
    var withoutProbes: IR {
        if case .probe(_, let inner) = self { return inner.withoutProbes }
        return mapChildren { $0.withoutProbes }
    }

    private func mapChildren(_ transform: (IR) -> IR) -> IR {
        switch self {
        case .constant, .variable, .wildcard, .queryField:
            return self
        case .probe(let number, let inner): return .probe(number, transform(inner))
        case .not(let operand): return .not(transform(operand))
        case .negate(let operand): return .negate(transform(operand))
        case .length(let operand): return .length(transform(operand))
        case .matches(let operand, let regex): return .matches(transform(operand), regex)
        case .dynamicMember(let operand, let name): return .dynamicMember(transform(operand), name)
        case .arithmetic(let op, let left, let right): return .arithmetic(op, transform(left), transform(right))
        case .equal(let left, let right, let negated): return .equal(transform(left), transform(right), negated: negated)
        case .ordering(let op, let left, let right): return .ordering(op, transform(left), transform(right))
        case .and(let left, let right): return .and(transform(left), transform(right))
        case .or(let left, let right): return .or(transform(left), transform(right))
        case .dynamicIndex(let left, let right): return .dynamicIndex(transform(left), transform(right))
        case .conditional(let test, let yes, let no): return .conditional(transform(test), transform(yes), transform(no))
        case .snapshotCall(let object, let method, let arguments): return .snapshotCall(transform(object), method, arguments.map(transform))
        case .stringCall(let object, let method, let arguments): return .stringCall(transform(object), method, arguments.map(transform))
        }
    }
}
