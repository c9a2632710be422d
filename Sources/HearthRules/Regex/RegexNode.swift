/// Syntax tree of a regular expression in Firebase's subset (docs/protocol/rules.md §3.5):
/// literals, `.`, classes, `\d \D \w \W \s \S`, escapes, groups, `|`, and `* + ?` / `{n}` /
/// `{n,}` / `{n,m}` counts. Anchors are not nodes: they are only allowed at the very start
/// and end and are kept as flags on the compiled regex.
indirect enum RegexNode: Sendable, Equatable {
    case empty
    case scalar(UInt32)
    case anyExceptLineTerminator
    case set(ScalarSet, negated: Bool)
    case concat([RegexNode])
    case alternate([RegexNode])
    /// `max == nil` is unbounded.
    case repetition(RegexNode, min: Int, max: Int?)
}
