/// Splits a rule expression into tokens (docs/protocol/rules.md §3.5).
///
/// A `/` starts a regular expression literal where an operand is expected (at the start,
/// after an operator or an opening bracket), as in JavaScript; elsewhere it divides.
struct Lexer {
    private let bytes: [UInt8]
    private var index = 0
    private var previous: Token.Kind?

    init(_ text: String) {
        bytes = Array(text.utf8)
    }

    static func tokenize(_ text: String) throws(ExpressionError) -> [Token] {
        var lexer = Lexer(text)
        var tokens: [Token] = []
        while true {
            let token = try lexer.next()
            tokens.append(token)
            if token.kind == .end { return tokens }
        }
    }

    private var regexAllowed: Bool {
        switch previous {
        case nil: return true
        case .punct(let punct): return punct != .rightParen && punct != .rightBracket
        default: return false
        }
    }

    private mutating func next() throws(ExpressionError) -> Token {
        while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
        guard index < bytes.count else { return Token(kind: .end, start: index, end: index) }
        let start = index
        let byte = bytes[index]
        let kind: Token.Kind
        if Self.isIdentifierStart(byte) {
            while index < bytes.count, Self.isIdentifierPart(bytes[index]) { index += 1 }
            kind = .identifier(String(decoding: bytes[start..<index], as: UTF8.self))
        } else if Self.isDigit(byte) || (byte == UInt8(ascii: ".") && index + 1 < bytes.count && Self.isDigit(bytes[index + 1])) {
            kind = .number(try lexNumber())
        } else if byte == UInt8(ascii: "'") || byte == UInt8(ascii: "\"") {
            kind = .string(try lexString(quote: byte))
        } else if byte == UInt8(ascii: "/") && index + 1 < bytes.count && (bytes[index + 1] == UInt8(ascii: "/") || bytes[index + 1] == UInt8(ascii: "*")) {
            throw ExpressionError(offset: start, message: "comments are not allowed inside a rule expression")
        } else if byte == UInt8(ascii: "/") && regexAllowed {
            kind = try lexRegex()
        } else if let punct = lexPunct() {
            kind = .punct(punct)
        } else if byte >= 0x80 {
            throw ExpressionError(offset: start, message: "unexpected non-ASCII character")
        } else {
            throw ExpressionError(offset: start, message: "unexpected character '\(Character(Unicode.Scalar(byte)))'")
        }
        previous = kind
        return Token(kind: kind, start: start, end: index)
    }

    private mutating func lexPunct() -> Token.Punct? {
        for length in stride(from: 3, through: 1, by: -1) where index + length <= bytes.count {
            let text = String(decoding: bytes[index..<(index + length)], as: UTF8.self)
            if let punct = Token.Punct(rawValue: text) {
                index += length
                return punct
            }
        }
        return nil
    }

    private mutating func lexNumber() throws(ExpressionError) -> Double {
        let start = index
        if bytes[index] == UInt8(ascii: "0"), index + 1 < bytes.count, Self.isIdentifierPart(bytes[index + 1]), !Self.isDigit(bytes[index + 1]) {
            throw ExpressionError(offset: start, message: "only decimal number literals are supported")
        }
        while index < bytes.count, Self.isDigit(bytes[index]) { index += 1 }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            while index < bytes.count, Self.isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard index < bytes.count, Self.isDigit(bytes[index]) else {
                throw ExpressionError(offset: start, message: "malformed number literal")
            }
            while index < bytes.count, Self.isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, Self.isIdentifierPart(bytes[index]) {
            throw ExpressionError(offset: start, message: "malformed number literal")
        }
        guard let value = Double(String(decoding: bytes[start..<index], as: UTF8.self)), value.isFinite else {
            throw ExpressionError(offset: start, message: "malformed number literal")
        }
        return value
    }

    /// JavaScript string literal: escapes as in JS; a raw line break ends nothing and is an error.
    private mutating func lexString(quote: UInt8) throws(ExpressionError) -> String {
        let start = index
        index += 1
        var scalars = String.UnicodeScalarView()
        var pending: [UInt8] = []
        func flush() {
            if !pending.isEmpty {
                scalars.append(contentsOf: String(decoding: pending, as: UTF8.self).unicodeScalars)
                pending.removeAll()
            }
        }
        while true {
            guard index < bytes.count else {
                throw ExpressionError(offset: start, message: "unterminated string literal")
            }
            let byte = bytes[index]
            if byte == quote {
                index += 1
                flush()
                return String(scalars)
            }
            if byte == 0x0A || byte == 0x0D {
                throw ExpressionError(offset: start, message: "unterminated string literal (line break inside)")
            }
            if byte != UInt8(ascii: "\\") {
                pending.append(byte)
                index += 1
                continue
            }
            flush()
            let escapeStart = index
            guard index + 1 < bytes.count else {
                throw ExpressionError(offset: start, message: "unterminated string literal")
            }
            let kind = bytes[index + 1]
            index += 2
            switch kind {
            case UInt8(ascii: "n"): scalars.append("\n")
            case UInt8(ascii: "t"): scalars.append("\t")
            case UInt8(ascii: "r"): scalars.append("\r")
            case UInt8(ascii: "b"): scalars.append("\u{08}")
            case UInt8(ascii: "f"): scalars.append("\u{0C}")
            case UInt8(ascii: "v"): scalars.append("\u{0B}")
            case UInt8(ascii: "0"): scalars.append("\u{00}")
            case UInt8(ascii: "x"):
                scalars.append(try hexScalar(digits: 2, escapeStart: escapeStart))
            case UInt8(ascii: "u"):
                scalars.append(try hexScalar(digits: 4, escapeStart: escapeStart))
            case 0x0A, 0x0D:
                throw ExpressionError(offset: escapeStart, message: "line continuation is not supported in string literals")
            default:
                // JavaScript: any other escaped character stands for itself.
                index -= 1
                let scalarStart = index
                index += 1
                while index < bytes.count, bytes[index] & 0xC0 == 0x80 { index += 1 }
                scalars.append(contentsOf: String(decoding: bytes[scalarStart..<index], as: UTF8.self).unicodeScalars)
            }
        }
    }

    private mutating func hexScalar(digits: Int, escapeStart: Int) throws(ExpressionError) -> Unicode.Scalar {
        guard index + digits <= bytes.count,
              let value = UInt32(String(decoding: bytes[index..<(index + digits)], as: UTF8.self), radix: 16),
              let scalar = Unicode.Scalar(value)
        else {
            throw ExpressionError(offset: escapeStart, message: "invalid escape sequence in a string literal")
        }
        index += digits
        return scalar
    }

    /// `/pattern/flags`: the pattern ends at the first `/` that is neither escaped nor inside
    /// a character class. Flags are checked later, by the type checker.
    private mutating func lexRegex() throws(ExpressionError) -> Token.Kind {
        let start = index
        index += 1
        var inClass = false
        while true {
            guard index < bytes.count, bytes[index] != 0x0A, bytes[index] != 0x0D else {
                throw ExpressionError(offset: start, message: "unterminated regular expression literal")
            }
            let byte = bytes[index]
            if byte == UInt8(ascii: "\\") {
                index += 2
                continue
            }
            if byte == UInt8(ascii: "[") { inClass = true }
            if byte == UInt8(ascii: "]") { inClass = false }
            if byte == UInt8(ascii: "/") && !inClass { break }
            index += 1
        }
        let pattern = String(decoding: bytes[(start + 1)..<index], as: UTF8.self)
        index += 1
        let flagsStart = index
        while index < bytes.count, Self.isIdentifierPart(bytes[index]) { index += 1 }
        let flags = String(decoding: bytes[flagsStart..<index], as: UTF8.self)
        return .regex(pattern: pattern, flags: flags)
    }

    static func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    static func isIdentifierStart(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
            || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "$")
    }

    static func isIdentifierPart(_ byte: UInt8) -> Bool {
        isIdentifierStart(byte) || isDigit(byte)
    }
}
