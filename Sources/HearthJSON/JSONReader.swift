/// The parser's state over one input buffer (the engine behind `JSONParser`, which is
/// the API). This file holds the structure: values, containers, whitespace, literals.
/// Strings are in JSONReader+String.swift, numbers in JSONReader+Number.swift.
struct JSONReader {
    let bytes: UnsafeBufferPointer<UInt8>
    /// The offset of the next unread byte.
    var pos = 0
    /// Reused buffer for strings that contain escapes.
    var scratch: [UInt8] = []

    init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    /// The containers still open, innermost last. Kept as parallel stacks (not an enum
    /// with payloads) so elements are added in place: binding an enum payload to a `var`
    /// would copy the array or dictionary on every element.
    private var openKinds: [Kind] = []
    private var openArrays: [[JSONValue]] = []
    private var openObjects: [[JSONKey: JSONValue]] = []
    /// The key each open object is waiting to receive a value for.
    private var pendingKeys: [String] = []

    private enum Kind { case array, object }

    mutating func parseDocument() throws(JSONParseError) -> JSONValue {
        var value: JSONValue

        parseValue: while true {
            skipWhitespace()
            guard pos < bytes.count else { throw .unexpectedEndOfInput(offset: pos) }
            let byte = bytes[pos]
            switch byte {
            case UInt8(ascii: "{"):
                guard openKinds.count < JSONParser.maxNesting else { throw .nestingTooDeep(offset: pos) }
                pos += 1
                skipWhitespace()
                if pos < bytes.count, bytes[pos] == UInt8(ascii: "}") {
                    pos += 1
                    value = .object([JSONKey: JSONValue]())
                } else {
                    let key = try parseKeyAndColon()
                    openKinds.append(.object)
                    openObjects.append([:])
                    pendingKeys.append(key)
                    continue parseValue
                }
            case UInt8(ascii: "["):
                guard openKinds.count < JSONParser.maxNesting else { throw .nestingTooDeep(offset: pos) }
                pos += 1
                skipWhitespace()
                if pos < bytes.count, bytes[pos] == UInt8(ascii: "]") {
                    pos += 1
                    value = .array([])
                } else {
                    openKinds.append(.array)
                    openArrays.append([])
                    continue parseValue
                }
            case UInt8(ascii: "\""):
                value = .string(try parseString())
            case UInt8(ascii: "t"):
                try expectLiteral("true")
                value = .bool(true)
            case UInt8(ascii: "f"):
                try expectLiteral("false")
                value = .bool(false)
            case UInt8(ascii: "n"):
                try expectLiteral("null")
                value = .null
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                value = try parseNumber()
            default:
                throw .unexpectedByte(byte, offset: pos)
            }

            // `value` is complete: hand it to the innermost open container, closing as
            // many containers as the input closes.
            while let kind = openKinds.last {
                skipWhitespace()
                guard pos < bytes.count else { throw .unexpectedEndOfInput(offset: pos) }
                let next = bytes[pos]
                switch kind {
                case .array:
                    openArrays[openArrays.count - 1].append(value)
                    if next == UInt8(ascii: ",") {
                        pos += 1
                        continue parseValue
                    } else if next == UInt8(ascii: "]") {
                        pos += 1
                        openKinds.removeLast()
                        value = .array(openArrays.removeLast())
                    } else {
                        throw .unexpectedByte(next, offset: pos)
                    }
                case .object:
                    // Duplicate keys: the last one wins.
                    openObjects[openObjects.count - 1][pendingKeys.removeLast()] = value
                    if next == UInt8(ascii: ",") {
                        pos += 1
                        skipWhitespace()
                        pendingKeys.append(try parseKeyAndColon())
                        continue parseValue
                    } else if next == UInt8(ascii: "}") {
                        pos += 1
                        openKinds.removeLast()
                        value = .object(openObjects.removeLast())
                    } else {
                        throw .unexpectedByte(next, offset: pos)
                    }
                }
            }

            skipWhitespace()
            guard pos == bytes.count else { throw .trailingData(offset: pos) }
            return value
        }
    }

    // MARK: Tokens

    private mutating func skipWhitespace() {
        while pos < bytes.count {
            switch bytes[pos] {
            case 0x20, 0x09, 0x0A, 0x0D: pos += 1
            default: return
            }
        }
    }

    /// At a `"` (after whitespace): reads an object key, then whitespace and the `:`.
    private mutating func parseKeyAndColon() throws(JSONParseError) -> String {
        guard pos < bytes.count else { throw .unexpectedEndOfInput(offset: pos) }
        guard bytes[pos] == UInt8(ascii: "\"") else { throw .unexpectedByte(bytes[pos], offset: pos) }
        let key = try parseString()
        skipWhitespace()
        guard pos < bytes.count else { throw .unexpectedEndOfInput(offset: pos) }
        guard bytes[pos] == UInt8(ascii: ":") else { throw .unexpectedByte(bytes[pos], offset: pos) }
        pos += 1
        return key
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(JSONParseError) {
        let count = literal.utf8CodeUnitCount
        let text = literal.utf8Start
        for i in 0..<count {
            guard pos < bytes.count else { throw .unexpectedEndOfInput(offset: pos) }
            guard bytes[pos] == text[i] else { throw .unexpectedByte(bytes[pos], offset: pos) }
            pos += 1
        }
    }
}

