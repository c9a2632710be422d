/// Why a streamed JSON document (`JSONStreamReader`) was rejected.
public enum JSONStreamError: Error, Sendable, Hashable {
    /// The bytes are not valid JSON: the same case and byte offset `JSONParser` reports for
    /// the same bytes.
    case syntax(JSONParseError)
    /// A string or number longer than the reader's `maxTokenBytes` (raw, escapes included)
    /// starts at `offset`: the reader would have to hold it whole.
    case tokenTooLong(limit: Int, offset: Int)
    /// A value read whole (`JSONStreamReader.value(startingWith:maxBytes:)`) is longer
    /// than `limit` bytes; it starts at `offset`.
    case valueTooLarge(limit: Int, offset: Int)
    /// The byte source failed; `detail` names the cause (e.g. a read error's errno).
    case source(String)

    /// The byte offset the problem was found at (nil for source failures).
    public var offset: Int? {
        switch self {
        case .syntax(let error): return error.offset
        case .tokenTooLong(_, let offset), .valueTooLarge(_, let offset): return offset
        case .source: return nil
        }
    }
}

extension JSONStreamError: CustomStringConvertible {
    /// For operators: the problem and where (never a quote of the input).
    public var description: String {
        switch self {
        case .syntax(let error): return "invalid JSON: \(error.debugDescription)"
        case .tokenTooLong(let limit, let offset):
            return "invalid JSON: a string or number longer than \(limit) bytes at offset \(offset)"
        case .valueTooLarge(let limit, let offset):
            return "a value longer than \(limit) bytes at offset \(offset)"
        case .source(let detail): return "cannot read the input: \(detail)"
        }
    }
}

extension JSONParseError {
    /// The same error with its offset moved by `delta` (a token parsed on its own, whose
    /// offsets count from the token's start).
    func shifted(by delta: Int) -> JSONParseError {
        switch self {
        case .unexpectedEndOfInput(let o): return .unexpectedEndOfInput(offset: o + delta)
        case .unexpectedByte(let b, let o): return .unexpectedByte(b, offset: o + delta)
        case .invalidUTF8(let o): return .invalidUTF8(offset: o + delta)
        case .controlCharacterInString(let o): return .controlCharacterInString(offset: o + delta)
        case .invalidEscape(let o): return .invalidEscape(offset: o + delta)
        case .loneSurrogate(let o): return .loneSurrogate(offset: o + delta)
        case .invalidNumber(let o): return .invalidNumber(offset: o + delta)
        case .numberOutOfRange(let o): return .numberOutOfRange(offset: o + delta)
        case .nestingTooDeep(let o): return .nestingTooDeep(offset: o + delta)
        case .trailingData(let o): return .trailingData(offset: o + delta)
        }
    }
}
