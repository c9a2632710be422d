/// A JSON value of the rules file together with where it was written.
///
/// The reader keeps positions so that every structure and expression error can name its
/// line and column in the file (docs/protocol/rules.md §3.6). `offset` is a byte offset
/// into the file, or `nil` when the rules came from an already parsed `JSONValue` (no file
/// to point into).
struct RulesJSON: Sendable {
    enum Kind: Sendable {
        case object([Member])
        case array([RulesJSON])
        case string(RulesString)
        case number(String)
        case bool(Bool)
        case null
    }

    struct Member: Sendable {
        let key: String
        let keyOffset: Int?
        let value: RulesJSON
    }

    let kind: Kind
    let offset: Int?

    /// A short name of the value's type for messages ("a number", "an object", …).
    var typeDescription: String {
        switch kind {
        case .object: return "an object"
        case .array: return "an array"
        case .string: return "a string"
        case .number: return "a number"
        case .bool: return "a boolean"
        case .null: return "null"
        }
    }
}

/// A decoded string with, for every decoded UTF-8 byte, the file offset of the source
/// character or escape it came from. Expression errors are found at offsets inside the
/// decoded text and mapped back through this table, so `\"` escapes and strings that span
/// lines still give the right column in the file.
struct RulesString: Sendable {
    let value: String
    /// `sourceOffsets[i]` is the file offset for decoded byte `i`; one extra entry holds the
    /// offset of the closing quote. `nil` when there is no file.
    let sourceOffsets: [Int]?

    func fileOffset(forDecodedByte index: Int) -> Int? {
        guard let offsets = sourceOffsets, !offsets.isEmpty else { return nil }
        return offsets[max(0, min(index, offsets.count - 1))]
    }
}
