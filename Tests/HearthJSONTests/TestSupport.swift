@testable import HearthJSON

/// Parses a JSON text given as a Swift string.
func parse(_ text: String) throws(JSONParseError) -> JSONValue {
    try JSONParser.parse(text)
}

/// Compact JSON text of a value.
func json(_ value: JSONValue, style: JSONWriter.Style = .compact) -> String {
    JSONWriter.string(value, style: style)
}

/// The error's case name, ignoring the offset (for reject tables).
func kind(_ error: JSONParseError) -> String {
    switch error {
    case .unexpectedEndOfInput: return "end"
    case .unexpectedByte: return "byte"
    case .invalidUTF8: return "utf8"
    case .controlCharacterInString: return "control"
    case .invalidEscape: return "escape"
    case .loneSurrogate: return "surrogate"
    case .invalidNumber: return "number"
    case .numberOutOfRange: return "range"
    case .nestingTooDeep: return "nesting"
    case .trailingData: return "trailing"
    }
}

/// The parse error for `bytes`, or nil when they parse.
func parseError(_ bytes: [UInt8]) -> JSONParseError? {
    do {
        _ = try JSONParser.parse(bytes)
        return nil
    } catch {
        return error
    }
}

func path(_ s: String) throws -> DataPath {
    try DataPath(string: s)
}
