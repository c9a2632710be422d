/// Reads Firebase's relaxed JSON for rules files (docs/protocol/rules.md §3.1): standard
/// JSON plus `//` and `/* */` comments, and string literals that may span lines. Everything
/// else that strict JSON forbids stays forbidden: unquoted keys, single quotes, trailing
/// commas, duplicate keys (a duplicated rule would be ambiguous), and anything after the
/// top-level value.
///
/// The parser keeps the byte offset of every value so later stages can report positions.
/// It stops at the first syntax error: after one, the structure is unknown.
struct RulesFileParser {
    struct SyntaxError: Error, Sendable {
        let offset: Int
        let message: String
        /// The rules path of the object being read when the error was met.
        let path: String
    }

    /// Deeper nesting is rejected: rules mirror data, which Firebase caps at 32 levels.
    static let maxNestingDepth = 96

    let bytes: [UInt8]
    var index = 0

    init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    static func parse(_ source: SourceText) throws(SyntaxError) -> RulesJSON {
        var parser = RulesFileParser(bytes: source.bytes)
        try parser.skipTrivia(path: "")
        let value = try parser.parseValue(depth: 0, path: "")
        try parser.skipTrivia(path: "")
        if parser.index < parser.bytes.count {
            throw SyntaxError(offset: parser.index, message: "unexpected text after the top-level value", path: "")
        }
        return value
    }

    // MARK: - Trivia

    private mutating func skipTrivia(path: String) throws(SyntaxError) {
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case 0x20, 0x09, 0x0A, 0x0D:
                index += 1
            case UInt8(ascii: "/"):
                guard index + 1 < bytes.count else {
                    throw SyntaxError(offset: index, message: "unexpected '/'", path: path)
                }
                if bytes[index + 1] == UInt8(ascii: "/") {
                    index += 2
                    while index < bytes.count && bytes[index] != 0x0A { index += 1 }
                } else if bytes[index + 1] == UInt8(ascii: "*") {
                    let start = index
                    index += 2
                    var closed = false
                    while index + 1 < bytes.count {
                        if bytes[index] == UInt8(ascii: "*") && bytes[index + 1] == UInt8(ascii: "/") {
                            index += 2
                            closed = true
                            break
                        }
                        index += 1
                    }
                    if !closed {
                        throw SyntaxError(offset: start, message: "unterminated block comment", path: path)
                    }
                } else {
                    throw SyntaxError(offset: index, message: "unexpected '/'", path: path)
                }
            default:
                return
            }
        }
    }

    // MARK: - Values

    private mutating func parseValue(depth: Int, path: String) throws(SyntaxError) -> RulesJSON {
        guard index < bytes.count else {
            throw SyntaxError(offset: index, message: "unexpected end of file, expected a value", path: path)
        }
        let start = index
        switch bytes[index] {
        case UInt8(ascii: "{"):
            return try parseObject(depth: depth + 1, path: path)
        case UInt8(ascii: "["):
            return try parseArray(depth: depth + 1, path: path)
        case UInt8(ascii: "\""):
            return RulesJSON(kind: .string(try parseString(path: path)), offset: start)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return RulesJSON(kind: .number(try parseNumber(path: path)), offset: start)
        default:
            if consumeWord("true") { return RulesJSON(kind: .bool(true), offset: start) }
            if consumeWord("false") { return RulesJSON(kind: .bool(false), offset: start) }
            if consumeWord("null") { return RulesJSON(kind: .null, offset: start) }
            if Self.isWordByte(bytes[start]) {
                // A word (a misspelt literal, an unquoted string): named whole, not by its first letter.
                var end = start
                while end < bytes.count, Self.isWordByte(bytes[end]) { end += 1 }
                let word = String(decoding: bytes[start..<min(end, start + Self.maxQuotedWordBytes)], as: UTF8.self)
                    + (end - start > Self.maxQuotedWordBytes ? "…" : "")
                let guess = ["true", "false", "null"].first { $0.hasPrefix(word.lowercased()) || word.lowercased().hasPrefix($0) }
                let hint = guess.map { " (did you mean \($0)?)" } ?? " (strings are quoted)"
                throw SyntaxError(offset: start, message: "unexpected word '\(word)', expected a JSON value\(hint)", path: path)
            }
            throw SyntaxError(offset: start, message: "unexpected character \(describe(bytes[start])), expected a JSON value", path: path)
        }
    }

    /// The most bytes of an unexpected word an error repeats.
    static let maxQuotedWordBytes = 40

    private mutating func consumeWord(_ word: StaticString) -> Bool {
        let count = word.utf8CodeUnitCount
        guard index + count <= bytes.count else { return false }
        let matches = word.withUTF8Buffer { buffer in
            for offset in 0..<count where bytes[index + offset] != buffer[offset] { return false }
            return true
        }
        guard matches else { return false }
        // "trueish" is not "true".
        if index + count < bytes.count, Self.isWordByte(bytes[index + count]) { return false }
        index += count
        return true
    }

    private static func isWordByte(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
            || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "$")
    }

    private mutating func parseObject(depth: Int, path: String) throws(SyntaxError) -> RulesJSON {
        let start = index
        guard depth <= Self.maxNestingDepth else {
            throw SyntaxError(offset: start, message: "rules nested deeper than \(Self.maxNestingDepth) levels", path: path)
        }
        index += 1
        var members: [RulesJSON.Member] = []
        var seen = Set<[UInt8]>()
        try skipTrivia(path: path)
        if index < bytes.count && bytes[index] == UInt8(ascii: "}") {
            index += 1
            return RulesJSON(kind: .object(members), offset: start)
        }
        while true {
            try skipTrivia(path: path)
            guard index < bytes.count else {
                throw SyntaxError(offset: index, message: "unexpected end of file inside an object (missing '}')", path: path)
            }
            guard bytes[index] == UInt8(ascii: "\"") else {
                let message = bytes[index] == UInt8(ascii: "}")
                    ? "trailing comma before '}'"
                    : "expected a quoted key, found \(describe(bytes[index]))"
                throw SyntaxError(offset: index, message: message, path: path)
            }
            let keyOffset = index
            let key = try parseString(path: path).value
            let childPath = path + "/" + key
            if !seen.insert(Array(key.utf8)).inserted {
                throw SyntaxError(offset: keyOffset, message: "duplicate key \"\(key)\"", path: path)
            }
            try skipTrivia(path: path)
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else {
                throw SyntaxError(offset: index, message: "expected ':' after key \"\(key)\"", path: path)
            }
            index += 1
            try skipTrivia(path: childPath)
            let value = try parseValue(depth: depth, path: childPath)
            members.append(RulesJSON.Member(key: key, keyOffset: keyOffset, value: value))
            try skipTrivia(path: path)
            guard index < bytes.count else {
                throw SyntaxError(offset: index, message: "unexpected end of file inside an object (missing '}')", path: path)
            }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            if bytes[index] == UInt8(ascii: "}") {
                index += 1
                return RulesJSON(kind: .object(members), offset: start)
            }
            throw SyntaxError(offset: index, message: "expected ',' or '}' in an object, found \(describe(bytes[index]))", path: path)
        }
    }

    private mutating func parseArray(depth: Int, path: String) throws(SyntaxError) -> RulesJSON {
        let start = index
        guard depth <= Self.maxNestingDepth else {
            throw SyntaxError(offset: start, message: "rules nested deeper than \(Self.maxNestingDepth) levels", path: path)
        }
        index += 1
        var elements: [RulesJSON] = []
        try skipTrivia(path: path)
        if index < bytes.count && bytes[index] == UInt8(ascii: "]") {
            index += 1
            return RulesJSON(kind: .array(elements), offset: start)
        }
        while true {
            try skipTrivia(path: path)
            if index < bytes.count && bytes[index] == UInt8(ascii: "]") {
                throw SyntaxError(offset: index, message: "trailing comma before ']'", path: path)
            }
            elements.append(try parseValue(depth: depth, path: path))
            try skipTrivia(path: path)
            guard index < bytes.count else {
                throw SyntaxError(offset: index, message: "unexpected end of file inside an array (missing ']')", path: path)
            }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            if bytes[index] == UInt8(ascii: "]") {
                index += 1
                return RulesJSON(kind: .array(elements), offset: start)
            }
            throw SyntaxError(offset: index, message: "expected ',' or ']' in an array, found \(describe(bytes[index]))", path: path)
        }
    }

    private mutating func parseNumber(path: String) throws(SyntaxError) -> String {
        let start = index
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count, isDigit(bytes[index]) else {
            throw SyntaxError(offset: start, message: "malformed number", path: path)
        }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else {
            while index < bytes.count && isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count && bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else {
                throw SyntaxError(offset: start, message: "malformed number", path: path)
            }
            while index < bytes.count && isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count && (bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E")) {
            index += 1
            if index < bytes.count && (bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-")) { index += 1 }
            guard index < bytes.count, isDigit(bytes[index]) else {
                throw SyntaxError(offset: start, message: "malformed number", path: path)
            }
            while index < bytes.count && isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, Self.isWordByte(bytes[index]) {
            throw SyntaxError(offset: start, message: "malformed number", path: path)
        }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    private func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    private func describe(_ byte: UInt8) -> String {
        if byte >= 0x21 && byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
        return "byte 0x\(String(byte, radix: 16))"
    }
}
