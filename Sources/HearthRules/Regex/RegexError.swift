/// A regular expression that Firebase's subset does not accept (docs/protocol/rules.md
/// §3.5), found at load time. `offset` is a byte offset into the pattern text.
struct RegexError: Error, Sendable {
    let offset: Int
    let message: String
    /// The flags, not the pattern, are wrong (the error points after the closing '/').
    var flagError = false
}
