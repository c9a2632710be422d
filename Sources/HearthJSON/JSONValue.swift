/// A JSON value as Hearth stores and serves it.
///
/// Numbers keep their kind: a literal without fraction or exponent that fits in `Int64`
/// stays `.int`, everything else is `.double` (docs/protocol/rest.md §1.7: NaN and
/// ±Infinity are not representable and are rejected by the parser). Objects are unordered;
/// writers order keys by Firebase's key order (`FirebaseKeyOrder`) so output is
/// deterministic.
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([JSONKey: JSONValue])
}

extension JSONValue {
    /// True for strings, numbers and booleans: the values stored as tree leaves.
    public var isLeaf: Bool {
        switch self {
        case .bool, .int, .double, .string: return true
        case .null, .array, .object: return false
        }
    }

    /// The children of an object, or nil.
    public var objectValue: [JSONKey: JSONValue]? {
        if case .object(let children) = self { return children }
        return nil
    }

    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }
}
