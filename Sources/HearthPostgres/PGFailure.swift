import CLibPQ
import HearthStore

/// How a PostgreSQL failure becomes a `StoreError`: the SQLSTATE is the
/// failure's code and decides its kind; the message is the server's primary message only
/// (its DETAIL may quote row values), with the values quoted by data errors (class 22)
/// blanked, and the constraint's name appended as " (constraint NAME)" so a caller can
/// tell a duplicate email from a duplicate key (`EngineFailure.postgresConstraint`).
enum PGFailure {
    static func make(code: String, kind: EngineFailure.Kind, message: String, operation: String) -> StoreError {
        .engine(EngineFailure(engine: "postgres", code: code, kind: kind, message: message, operation: operation))
    }

    /// The error for a failed statement. `broken`: the connection is lost, whatever the
    /// SQLSTATE (an administrator's termination has one; a dropped socket has none).
    static func error(sqlstate: String?, message: String, constraint: String?, broken: Bool,
                      operation: String) -> StoreError {
        var text = message
        if let sqlstate, sqlstate.hasPrefix("22") { text = blankingQuotes(text) }
        if let constraint, !constraint.isEmpty { text += " (constraint \(constraint))" }
        let code = sqlstate ?? (broken ? "connection" : "client")
        let kind: EngineFailure.Kind = broken ? .unavailable : self.kind(sqlstate: sqlstate ?? "")
        return make(code: code, kind: kind, message: text, operation: operation)
    }

    /// The kind of failure a SQLSTATE stands for.
    static func kind(sqlstate: String) -> EngineFailure.Kind {
        switch sqlstate {
        case "55P03", "57014":  // lock_not_available (lock_timeout, NOWAIT), query_canceled
            return .busy
        case "57P01", "57P02", "57P03", "57P04", "57P05":  // shutdowns, database dropped, idle timeout
            return .unavailable
        default:
            switch sqlstate.prefix(2) {
            case "40": return .conflict  // serialization_failure, deadlock_detected
            case "53": return .full  // disk_full, out_of_memory, too_many_connections
            case "23": return .constraint
            case "08": return .unavailable  // connection exceptions
            default: return .other
            }
        }
    }

    // libpq's PG_DIAG_* are character-literal macros, which Swift does not import.
    static let sqlstateField = Int32(UInt8(ascii: "C"))  // PG_DIAG_SQLSTATE
    static let primaryMessageField = Int32(UInt8(ascii: "M"))  // PG_DIAG_MESSAGE_PRIMARY
    static let constraintField = Int32(UInt8(ascii: "n"))  // PG_DIAG_CONSTRAINT_NAME

    /// A diagnostic field of a failed result, nil when absent.
    static func field(_ result: OpaquePointer, _ code: Int32) -> String? {
        PQresultErrorField(result, code).map { String(cString: $0) }
    }

    /// libpq's own message (it ends in a newline, sometimes has a hint line after).
    static func trimmed(_ message: UnsafePointer<CChar>?) -> String {
        guard let message else { return "" }
        var text = Substring(String(cString: message))
        while let last = text.last, last.isWhitespace { text = text.dropLast() }
        return text.isEmpty ? "unknown libpq failure" : String(text)
    }

    /// `invalid input syntax for type bigint: "abc"` → `… bigint: "…"`: data errors quote
    /// the value that failed, which may be user data.
    static func blankingQuotes(_ message: String) -> String {
        var result = ""
        var quoted = false
        for character in message {
            if character == "\"" {
                result.append(quoted ? "…\"" : "\"")
                quoted.toggle()
            } else if !quoted {
                result.append(character)
            }
        }
        if quoted { result.append("…") }
        return result
    }
}

extension EngineFailure {
    /// The constraint a PostgreSQL failure names (a unique index, a foreign key, a check),
    /// e.g. `users_email_key`; nil for other failures.
    var postgresConstraint: String? {
        guard engine == "postgres", message.hasSuffix(")"),
              let start = message.ranges(of: " (constraint ").last else { return nil }
        return String(message[start.upperBound..<message.index(before: message.endIndex)])
    }
}
