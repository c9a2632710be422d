import HearthJSON

/// A value during rule evaluation (docs/protocol/rules.md §3.3–§3.5).
enum RuntimeValue: Sendable {
    case null
    case bool(Bool)
    /// All numbers are IEEE doubles, as in JavaScript: `1 == 1.0` (corpus
    /// `op-int-equals-float-literal`), `1/0` is NaN (docs/protocol/rules.md §3.5).
    case number(Double)
    case string(String)
    /// What `val()` returns for a node that has children: an opaque value that is not
    /// null and equals nothing (docs/protocol/rules.md §3.4, §3.5).
    case nonLeaf
    /// An object or array reached through `auth` (e.g. `auth.token`).
    case json(JSONValue)
    case snapshot(SnapshotRef)

    /// Converts stored or token JSON: leaves to primitives, containers stay JSON.
    init(_ value: JSONValue) {
        switch value {
        case .null: self = .null
        case .bool(let flag): self = .bool(flag)
        case .int(let number): self = .number(Double(number))
        case .double(let number): self = .number(number)
        case .string(let text): self = .string(text)
        case .array, .object: self = .json(value)
        }
    }

    /// Type name for runtime error messages.
    var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "boolean"
        case .number: return "number"
        case .string: return "string"
        case .nonLeaf: return "object"
        case .json: return "object"
        case .snapshot: return "snapshot"
        }
    }
}
