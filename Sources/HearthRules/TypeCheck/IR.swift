/// A type-checked, name-resolved expression: what the evaluator runs.
///
/// The checker resolves every identifier, member and method at load time, so evaluation
/// never looks a name up in a table (docs/protocol/rules.md §3.1: unknown names are compile
/// errors anyway).
indirect enum IR: Sendable {
    case constant(RuntimeValue)
    case variable(RuleVariable)
    /// The key captured by the `index`-th wildcard on the rule's path (outermost first).
    case wildcard(Int)
    case queryField(QueryField)
    case not(IR)
    case negate(IR)
    /// `+ - * / %` (the operator decides concatenation versus addition at run time).
    case arithmetic(BinaryOperator, IR, IR)
    /// Strict equality (docs/protocol/rules.md §3.5); `negated` for `!=`/`!==`.
    case equal(IR, IR, negated: Bool)
    case ordering(BinaryOperator, IR, IR)
    case and(IR, IR)
    case or(IR, IR)
    case conditional(IR, IR, IR)
    /// `value.name` on a value whose type is only known at run time (under `auth`).
    case dynamicMember(IR, String)
    /// `value[key]` on a value whose type is only known at run time (under `auth`).
    case dynamicIndex(IR, IR)
    /// `.length` of a string (an error on anything else, docs/protocol/rules.md §3.2,
    /// §3.5).
    case length(IR)
    case snapshotCall(IR, SnapshotMethod, [IR])
    case stringCall(IR, StringMethod, [IR])
    case matches(IR, CompiledRegex)
    /// Coverage only (`RuleSet.compile(_:coverage:)`): evaluates the inner node and records
    /// its result for coverage site `site`. A plain compile never emits it.
    case probe(Int, IR)
}
