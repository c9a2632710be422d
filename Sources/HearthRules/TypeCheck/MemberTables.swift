/// RuleDataSnapshot methods (docs/protocol/rules.md §3.4), resolved at load time.
enum SnapshotMethod: String, Sendable, CaseIterable {
    case val, child, parent, hasChild, hasChildren, exists, getPriority, isNumber, isString, isBoolean

    /// Fixed signature of every method but `hasChildren`, which the checker handles itself.
    var parameterCount: Int {
        switch self {
        case .child, .hasChild: return 1
        default: return 0
        }
    }

    var resultType: StaticType {
        switch self {
        case .val, .getPriority: return .primitive
        case .child, .parent: return .snapshot
        case .hasChild, .hasChildren, .exists, .isNumber, .isString, .isBoolean: return .boolean
        }
    }
}

/// String methods (docs/protocol/rules.md §3.5). `length` is a property, not a method, and
/// is not listed.
enum StringMethod: String, Sendable, CaseIterable {
    case contains, beginsWith, endsWith, replace, toLowerCase, toUpperCase, matches

    var parameterCount: Int {
        switch self {
        case .contains, .beginsWith, .endsWith, .matches: return 1
        case .replace: return 2
        case .toLowerCase, .toUpperCase: return 0
        }
    }

    var resultType: StaticType {
        switch self {
        case .contains, .beginsWith, .endsWith, .matches: return .boolean
        case .replace, .toLowerCase, .toUpperCase: return .string
        }
    }
}

/// Members of the `query` variable (docs/protocol/rules.md §3.3); any other member is a
/// compile error.
enum QueryField: String, Sendable, CaseIterable {
    case orderByKey, orderByValue, orderByPriority, orderByChild, startAt, endAt, equalTo, limitToFirst, limitToLast

    var type: StaticType {
        switch self {
        case .orderByKey, .orderByValue, .orderByPriority: return .boolean
        case .orderByChild: return .string
        case .startAt, .endAt, .equalTo: return .primitive
        case .limitToFirst, .limitToLast: return .number
        }
    }
}

/// The predefined variables (docs/protocol/rules.md §3.3).
enum RuleVariable: String, Sendable {
    case auth, root, data, newData, now, query
}

/// Which of the three expression rules an expression belongs to; it decides the scope:
/// `newData` only in `.write`/`.validate`, `query` only in `.read` (docs/protocol/rules.md
/// §3.3).
public enum RuleKind: String, Sendable, CaseIterable {
    case read = ".read"
    case write = ".write"
    case validate = ".validate"
}
