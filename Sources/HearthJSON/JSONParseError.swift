/// Why a JSON document was rejected, and at which byte offset of the input.
///
/// The parser is strict RFC 8259 (see `JSONParser`). Every case carries the zero-based byte
/// offset where the problem was detected, so logs and tests can point at it.
///
/// `description` is deliberately short and generic: it is the text the HTTP boundary puts
/// into `{"error":"Invalid data; couldn't parse JSON object, array, or value."}` (Firebase
/// docs/protocol/rest.md §1.9), and it never echoes the request. `debugDescription` names
/// the case and the offset, for logs and test failures; it echoes at most one input byte.
public enum JSONParseError: Error, Sendable, Hashable {
    /// The input ended inside a value (or was empty / only whitespace).
    case unexpectedEndOfInput(offset: Int)
    /// A byte that cannot start or continue the value at this point.
    case unexpectedByte(UInt8, offset: Int)
    /// The bytes are not well-formed UTF-8 (overlong, surrogate, > U+10FFFF, truncated).
    case invalidUTF8(offset: Int)
    /// A raw control character (U+0000–U+001F) inside a string; JSON requires an escape.
    case controlCharacterInString(offset: Int)
    /// A backslash escape other than `\" \\ \/ \b \f \n \r \t \uXXXX`.
    case invalidEscape(offset: Int)
    /// A `\u` escape of a UTF-16 surrogate without its partner.
    case loneSurrogate(offset: Int)
    /// A number that does not follow the RFC 8259 grammar (leading zeros, `1.`, `-`, ...).
    case invalidNumber(offset: Int)
    /// A number whose magnitude overflows `Double` (it would become ±Infinity, which
    /// Firebase forbids: docs/protocol/rest.md §1.7).
    case numberOutOfRange(offset: Int)
    /// Arrays and objects nested deeper than `JSONParser.maxNesting`.
    case nestingTooDeep(offset: Int)
    /// Something other than whitespace after the single top-level value.
    case trailingData(offset: Int)

    /// The zero-based byte offset in the input where the problem was detected.
    public var offset: Int {
        switch self {
        case .unexpectedEndOfInput(let o), .unexpectedByte(_, let o), .invalidUTF8(let o),
            .controlCharacterInString(let o), .invalidEscape(let o), .loneSurrogate(let o),
            .invalidNumber(let o), .numberOutOfRange(let o), .nestingTooDeep(let o),
            .trailingData(let o):
            return o
        }
    }
}

extension JSONParseError: CustomStringConvertible, CustomDebugStringConvertible {
    /// Generic text, safe to send to a client (docs/protocol/rest.md §1.9).
    public var description: String {
        "Invalid data; couldn't parse JSON object, array, or value."
    }

    /// The case and the offset, for logs and tests.
    public var debugDescription: String {
        switch self {
        case .unexpectedEndOfInput(let o): return "unexpected end of input at offset \(o)"
        case .unexpectedByte(let b, let o): return "unexpected byte 0x\(Self.hex(b)) at offset \(o)"
        case .invalidUTF8(let o): return "invalid UTF-8 at offset \(o)"
        case .controlCharacterInString(let o): return "unescaped control character in string at offset \(o)"
        case .invalidEscape(let o): return "invalid escape at offset \(o)"
        case .loneSurrogate(let o): return "lone UTF-16 surrogate escape at offset \(o)"
        case .invalidNumber(let o): return "invalid number at offset \(o)"
        case .numberOutOfRange(let o): return "number out of range at offset \(o)"
        case .nestingTooDeep(let o): return "nesting deeper than \(JSONParser.maxNesting) at offset \(o)"
        case .trailingData(let o): return "unexpected data after the value at offset \(o)"
        }
    }

    private static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789abcdef")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
    }
}
