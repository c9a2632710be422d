/// A problem found in one rule expression, located by byte offset within the expression.
/// The compiler maps the offset back into the rules file (docs/protocol/rules.md §3.6).
struct ExpressionError: Error, Sendable {
    let offset: Int
    let message: String
}
