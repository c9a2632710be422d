/// JSON strings (RFC 8259 §7): escapes, surrogate pairs, UTF-8 validation.
extension JSONReader {
    /// At the opening `"`: reads a string through its closing `"`.
    ///
    /// Fast path: no escapes, so the validated bytes become the `String` directly. With
    /// escapes, the decoded bytes are built in `scratch`.
    mutating func parseString() throws(JSONParseError) -> String {
        pos += 1  // opening quote
        let start = pos
        while pos < bytes.count {
            let byte = bytes[pos]
            if byte == UInt8(ascii: "\"") {
                let s = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<pos]), as: UTF8.self)
                pos += 1
                return s
            } else if byte == UInt8(ascii: "\\") {
                scratch.removeAll(keepingCapacity: true)
                scratch.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<pos]))
                return try parseEscapedString()
            } else if byte < 0x20 {
                throw .controlCharacterInString(offset: pos)
            } else if byte < 0x80 {
                pos += 1
            } else {
                pos += try validUTF8SequenceLength(at: pos)
            }
        }
        throw .unexpectedEndOfInput(offset: pos)
    }

    /// Continues a string from its first backslash, decoding into `scratch`.
    private mutating func parseEscapedString() throws(JSONParseError) -> String {
        while pos < bytes.count {
            let byte = bytes[pos]
            if byte == UInt8(ascii: "\"") {
                pos += 1
                return String(decoding: scratch, as: UTF8.self)
            } else if byte == UInt8(ascii: "\\") {
                try decodeEscape()
            } else if byte < 0x20 {
                throw .controlCharacterInString(offset: pos)
            } else if byte < 0x80 {
                scratch.append(byte)
                pos += 1
            } else {
                let length = try validUTF8SequenceLength(at: pos)
                scratch.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[pos..<pos + length]))
                pos += length
            }
        }
        throw .unexpectedEndOfInput(offset: pos)
    }

    /// At a backslash: decodes one escape (a surrogate pair counts as one) into `scratch`.
    private mutating func decodeEscape() throws(JSONParseError) {
        let escapeStart = pos
        pos += 1
        guard pos < bytes.count else { throw .unexpectedEndOfInput(offset: pos) }
        let kind = bytes[pos]
        pos += 1
        switch kind {
        case UInt8(ascii: "\""): scratch.append(0x22)
        case UInt8(ascii: "\\"): scratch.append(0x5C)
        case UInt8(ascii: "/"): scratch.append(0x2F)
        case UInt8(ascii: "b"): scratch.append(0x08)
        case UInt8(ascii: "f"): scratch.append(0x0C)
        case UInt8(ascii: "n"): scratch.append(0x0A)
        case UInt8(ascii: "r"): scratch.append(0x0D)
        case UInt8(ascii: "t"): scratch.append(0x09)
        case UInt8(ascii: "u"):
            let unit = try readHex4()
            var scalarValue = UInt32(unit)
            if (0xD800...0xDBFF).contains(unit) {
                // A high surrogate must be followed immediately by `\u` + a low surrogate.
                guard pos + 1 < bytes.count, bytes[pos] == UInt8(ascii: "\\"),
                    bytes[pos + 1] == UInt8(ascii: "u")
                else { throw .loneSurrogate(offset: escapeStart) }
                pos += 2
                let low = try readHex4()
                guard (0xDC00...0xDFFF).contains(low) else { throw .loneSurrogate(offset: escapeStart) }
                scalarValue = 0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00)
            } else if (0xDC00...0xDFFF).contains(unit) {
                throw .loneSurrogate(offset: escapeStart)
            }
            appendUTF8(scalarValue)
        default:
            throw .invalidEscape(offset: escapeStart)
        }
    }

    private mutating func readHex4() throws(JSONParseError) -> UInt16 {
        var value: UInt16 = 0
        for _ in 0..<4 {
            guard pos < bytes.count else { throw .unexpectedEndOfInput(offset: pos) }
            let byte = bytes[pos]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte &- UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte &- UInt8(ascii: "a") &+ 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte &- UInt8(ascii: "A") &+ 10
            default: throw .invalidEscape(offset: pos)
            }
            value = value << 4 | UInt16(digit)
            pos += 1
        }
        return value
    }

    /// Appends a Unicode scalar value (never a surrogate) as UTF-8.
    private mutating func appendUTF8(_ v: UInt32) {
        switch v {
        case 0..<0x80:
            scratch.append(UInt8(v))
        case 0x80..<0x800:
            scratch.append(UInt8(0xC0 | (v >> 6)))
            scratch.append(UInt8(0x80 | (v & 0x3F)))
        case 0x800..<0x10000:
            scratch.append(UInt8(0xE0 | (v >> 12)))
            scratch.append(UInt8(0x80 | ((v >> 6) & 0x3F)))
            scratch.append(UInt8(0x80 | (v & 0x3F)))
        default:
            scratch.append(UInt8(0xF0 | (v >> 18)))
            scratch.append(UInt8(0x80 | ((v >> 12) & 0x3F)))
            scratch.append(UInt8(0x80 | ((v >> 6) & 0x3F)))
            scratch.append(UInt8(0x80 | (v & 0x3F)))
        }
    }

    /// The length of the well-formed UTF-8 sequence starting with a non-ASCII byte at `i`
    /// (Unicode Table 3-7: no overlongs, no surrogates, nothing above U+10FFFF).
    private func validUTF8SequenceLength(at i: Int) throws(JSONParseError) -> Int {
        let lead = bytes[i]
        let length: Int
        var secondRange: ClosedRange<UInt8> = 0x80...0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; secondRange = 0xA0...0xBF
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: length = 3; secondRange = 0x80...0x9F
        case 0xF0: length = 4; secondRange = 0x90...0xBF
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; secondRange = 0x80...0x8F
        default: throw .invalidUTF8(offset: i)
        }
        guard i + length <= bytes.count else { throw .invalidUTF8(offset: i) }
        guard secondRange.contains(bytes[i + 1]) else { throw .invalidUTF8(offset: i) }
        for j in 2..<length where bytes[i + j] & 0xC0 != 0x80 {
            throw .invalidUTF8(offset: i)
        }
        return length
    }
}

