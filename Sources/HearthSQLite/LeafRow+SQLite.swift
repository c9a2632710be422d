import HearthJSON
import HearthStore

/// A leaf as the SQLite engine binds and reads it.
extension LeafRow {
    var sqliteValue: SQLiteValue {
        switch value {
        case .string(let s): return .text(s)
        case .int(let i): return .integer(i)
        case .double(let d): return .real(d)
        case .bool(let b): return .integer(b ? 1 : 0)
        case .null, .array, .object: preconditionFailure("not a leaf")
        }
    }

    static func decode(kind: Int64, statement: SQLiteStatement, column: Int32) throws(StoreError) -> JSONValue {
        switch LeafKind(rawValue: kind) {
        case .string: return .string(statement.text(column))
        case .int: return .int(statement.int64(column))
        case .double: return .double(statement.double(column))
        case .bool: return .bool(statement.int64(column) != 0)
        case nil: throw .corrupt("unknown leaf kind \(kind)")
        }
    }
}
