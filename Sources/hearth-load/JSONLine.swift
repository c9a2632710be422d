#if canImport(Glibc)
import Glibc
#endif

/// A value of a result line (no JSON library: the load generator depends on HearthSystem only).
enum JSONField: Equatable {
    case number(Double)
    case integer(Int)
    case string(String)
    case strings([String])
    case null

    static func optional(_ value: Double?) -> JSONField { value.map { .number($0) } ?? .null }
    static func optional(_ value: Int?) -> JSONField { value.map { .integer($0) } ?? .null }
}

/// One result line as harness.py's append_result writes it: json.dumps(sort_keys=True),
/// so `", "` and `": "` separators, keys in order.
func jsonLine(_ fields: [String: JSONField]) -> String {
    var out = "{"
    for (index, key) in fields.keys.sorted().enumerated() {
        if index > 0 { out += ", " }
        out += jsonString(key) + ": "
        switch fields[key]! {
        case .number(let value): out += value.isFinite ? "\(value)" : "null"
        case .integer(let value): out += "\(value)"
        case .string(let value): out += jsonString(value)
        case .strings(let values): out += "[" + values.map(jsonString).joined(separator: ", ") + "]"
        case .null: out += "null"
        }
    }
    return out + "}"
}

func jsonString(_ text: String) -> String {
    var out = "\""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "\n": out += "\\n"
        case "\r": out += "\\r"
        case "\t": out += "\\t"
        case _ where scalar.value < 0x20:
            let hex = String(scalar.value, radix: 16)
            out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
        default: out.unicodeScalars.append(scalar)
        }
    }
    return out + "\""
}

/// "YYYY-MM-DD HH:MM:SS" in local time (append_result's "date").
func localDate() -> String {
    var now = time(nil)
    var parts = tm()
    localtime_r(&now, &parts)
    var buffer = [Int8](repeating: 0, count: 32)
    let length = strftime(&buffer, buffer.count, "%Y-%m-%d %H:%M:%S", &parts)
    return String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
