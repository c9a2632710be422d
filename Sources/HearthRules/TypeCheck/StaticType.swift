/// The static types of the rules language, as inferred at load time (docs/protocol/rules.md
/// §3.1, §3.5).
///
/// `primitive` and `any` are the two "fuzzy" types whose exact type is only known at run
/// time: `primitive` is what `val()` returns (string, number, boolean, null or the
/// non-leaf sentinel), `any` is anything reached through `auth`.
enum StaticType: Sendable, Equatable {
    case boolean, number, string, null, regex, snapshot, query, primitive, any

    var isFuzzy: Bool { self == .primitive || self == .any }

    /// Types that are primitives, or may be (`any` may also be an object).
    var isPrimitiveLike: Bool {
        switch self {
        case .boolean, .number, .string, .null, .primitive: return true
        default: return false
        }
    }

    var display: String {
        switch self {
        case .boolean: return "boolean"
        case .number: return "number"
        case .string: return "string"
        case .null: return "null"
        case .regex: return "regular expression"
        case .snapshot: return "snapshot"
        case .query: return "query"
        case .primitive: return "value"
        case .any: return "value"
        }
    }
}
