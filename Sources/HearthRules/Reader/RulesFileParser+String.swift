extension RulesFileParser {
    /// Reads a double-quoted string. Raw line breaks and tabs are allowed inside (rule
    /// expressions are often wrapped over several lines, docs/protocol/rules.md §3.1);
    /// other control characters are not. Records the file offset of every decoded byte.
    mutating func parseString(path: String) throws(SyntaxError) -> RulesString {
        let start = index
        index += 1  // opening quote
        var decoded: [UInt8] = []
        var offsets: [Int] = []
        while true {
            guard index < bytes.count else {
                throw SyntaxError(offset: start, message: "unterminated string", path: path)
            }
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                offsets.append(index)
                index += 1
                return RulesString(value: String(decoding: decoded, as: UTF8.self), sourceOffsets: offsets)
            case UInt8(ascii: "\\"):
                let escapeStart = index
                guard index + 1 < bytes.count else {
                    throw SyntaxError(offset: escapeStart, message: "unterminated string", path: path)
                }
                let scalar = try parseEscape(path: path)
                for unit in String(Character(scalar)).utf8 {
                    decoded.append(unit)
                    offsets.append(escapeStart)
                }
            case 0x0A, 0x0D, 0x09:
                decoded.append(byte)
                offsets.append(index)
                index += 1
            case 0x00..<0x20:
                throw SyntaxError(offset: index, message: "control character in a string", path: path)
            default:
                decoded.append(byte)
                offsets.append(index)
                index += 1
            }
        }
    }

    /// Decodes one escape starting at the backslash and leaves `index` after it.
    private mutating func parseEscape(path: String) throws(SyntaxError) -> Unicode.Scalar {
        let start = index
        let kind = bytes[index + 1]
        index += 2
        switch kind {
        case UInt8(ascii: "\""): return "\""
        case UInt8(ascii: "\\"): return "\\"
        case UInt8(ascii: "/"): return "/"
        case UInt8(ascii: "b"): return "\u{08}"
        case UInt8(ascii: "f"): return "\u{0C}"
        case UInt8(ascii: "n"): return "\n"
        case UInt8(ascii: "r"): return "\r"
        case UInt8(ascii: "t"): return "\t"
        case UInt8(ascii: "u"):
            let high = try parseHex4(escapeStart: start, path: path)
            if (0xD800...0xDBFF).contains(high) {
                guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                    throw SyntaxError(offset: start, message: "unpaired surrogate in \\u escape", path: path)
                }
                index += 2
                let low = try parseHex4(escapeStart: start, path: path)
                guard (0xDC00...0xDFFF).contains(low) else {
                    throw SyntaxError(offset: start, message: "unpaired surrogate in \\u escape", path: path)
                }
                let value = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
                if let scalar = Unicode.Scalar(value) { return scalar }
                throw SyntaxError(offset: start, message: "invalid \\u escape", path: path)
            }
            guard let scalar = Unicode.Scalar(high) else {
                throw SyntaxError(offset: start, message: "unpaired surrogate in \\u escape", path: path)
            }
            return scalar
        default:
            throw SyntaxError(offset: start, message: "invalid escape in a string", path: path)
        }
    }

    private mutating func parseHex4(escapeStart: Int, path: String) throws(SyntaxError) -> UInt32 {
        guard index + 4 <= bytes.count else {
            throw SyntaxError(offset: escapeStart, message: "invalid \\u escape", path: path)
        }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw SyntaxError(offset: escapeStart, message: "invalid \\u escape", path: path)
            }
            value = value * 16 + digit
            index += 1
        }
        return value
    }
}
