/// A pull reader over one JSON document too large to hold (a database export, a user
/// export): events one at a time, from bytes read in chunks, so memory stays bounded by
/// the chunk size, the longest single token and the nesting depth, whatever the input's
/// size.
///
/// It accepts exactly what `JSONParser` accepts and rejects the rest with the same
/// `JSONParseError` case and offset (strings and numbers are decoded by the parser's own
/// code, one token at a time); a differential test holds the two together. Beyond that:
///
/// * a string or number longer than `maxTokenBytes` raw bytes is `tokenTooLong` (the
///   one thing a reader must hold whole);
/// * nesting deeper than `maxNesting` is `nestingTooDeep`, as in the parser;
/// * events before an error have been delivered: a consumer that must not act on a broken
///   document works inside a transaction it rolls back.
///
/// Duplicate keys are delivered as they come (`value(startingWith:)` lets the last win,
/// like the parser).
public struct JSONStreamReader {
    public enum Event: Sendable, Hashable {
        case objectStart
        case objectEnd
        case arrayStart
        case arrayEnd
        /// An object member's key; its value's events follow.
        case key(String)
        /// A string, number, boolean or null.
        case value(JSONValue)
    }

    /// Fills the buffer it is given with the next bytes of the input and returns how many;
    /// 0 means the input has ended.
    public typealias Source = (UnsafeMutableRawBufferPointer) throws(JSONStreamError) -> Int

    /// Bytes asked of the source per read.
    public static let defaultChunkBytes = 64 * 1024
    /// The longest raw token by default: the largest string the tree stores
    /// (`FirebaseTree.maxStringBytes`) written entirely as six-byte `\u` escapes, plus
    /// its quotes.
    public static let defaultMaxTokenBytes = 6 * FirebaseTree.maxStringBytes + 2

    public let maxNesting: Int
    public let maxTokenBytes: Int
    private let chunkBytes: Int
    private let source: Source

    private var buffer: [UInt8] = []
    /// The next unread byte in `buffer`.
    private var pos = 0
    /// The end of the bytes read into `buffer`.
    private var end = 0
    /// The input offset of `buffer[0]`.
    private var base = 0
    private var sourceEnded = false
    /// The open containers, innermost last: true for an object.
    private var open: [Bool] = []
    private var state = State.value

    private enum State {
        /// A value must come (the document's, after `:`, after `,` in an array).
        case value
        /// After `[`: a value or `]`.
        case firstInArray
        /// After `{`: a key or `}`.
        case firstInObject
        /// After `,` in an object: a key.
        case keyAfterComma
        /// After a complete value: `,`, the container's close, or the end of the input.
        case afterValue
        /// The document ended; `next()` returns nil.
        case finished
    }

    public init(maxNesting: Int = JSONParser.maxNesting, maxTokenBytes: Int = JSONStreamReader.defaultMaxTokenBytes,
                chunkBytes: Int = JSONStreamReader.defaultChunkBytes, source: @escaping Source) {
        precondition(maxNesting > 0 && maxTokenBytes > 0 && chunkBytes > 0, "JSONStreamReader: limits must be positive")
        self.maxNesting = maxNesting
        self.maxTokenBytes = maxTokenBytes
        self.chunkBytes = chunkBytes
        self.source = source
    }

    /// A reader over bytes already in memory, handed out `chunkBytes` at a time (tests,
    /// fuzzing: small chunks put token boundaries everywhere).
    public init(bytes: [UInt8], maxNesting: Int = JSONParser.maxNesting,
                maxTokenBytes: Int = JSONStreamReader.defaultMaxTokenBytes, chunkBytes: Int = JSONStreamReader.defaultChunkBytes) {
        let cursor = ByteCursor(bytes)
        self.init(maxNesting: maxNesting, maxTokenBytes: maxTokenBytes, chunkBytes: chunkBytes) { target throws(JSONStreamError) in
            cursor.read(into: target)
        }
    }

    /// The input offset of the next unread byte.
    public var offset: Int { base + pos }

    /// Containers open at this point.
    public var depth: Int { open.count }

    // MARK: Events

    /// The next event, or nil once the document (and only whitespace after it) ended.
    public mutating func next() throws(JSONStreamError) -> Event? {
        while true {
            switch state {
            case .finished:
                return nil
            case .value:
                return try startValue()
            case .firstInArray:
                guard let byte = try peekNonWhitespace() else { throw endOfInput() }
                if byte == UInt8(ascii: "]") { return close(object: false) }
                return try startValue()
            case .firstInObject:
                guard let byte = try peekNonWhitespace() else { throw endOfInput() }
                if byte == UInt8(ascii: "}") { return close(object: true) }
                return try readKey()
            case .keyAfterComma:
                return try readKey()
            case .afterValue:
                guard let isObject = open.last else {
                    if try peekNonWhitespace() != nil { throw .syntax(.trailingData(offset: offset)) }
                    state = .finished
                    return nil
                }
                guard let byte = try peekNonWhitespace() else { throw endOfInput() }
                if byte == UInt8(ascii: ",") {
                    pos += 1
                    state = isObject ? .keyAfterComma : .value
                } else if byte == UInt8(ascii: isObject ? "}" : "]") {
                    return close(object: isObject)
                } else {
                    throw .syntax(.unexpectedByte(byte, offset: offset))
                }
            }
        }
    }

    /// The whole value that begins with `first`, an event `next()` just returned
    /// (`.value`, `.objectStart` or `.arrayStart`), read through its end: for the small
    /// parts of a large document (one user of an export). More than `maxBytes` of input
    /// after `first` is `valueTooLarge`. Duplicate keys: the last one wins.
    public mutating func value(startingWith first: Event, maxBytes: Int = .max) throws(JSONStreamError) -> JSONValue {
        let start = offset
        var objects: [[JSONKey: JSONValue]] = []
        var arrays: [[JSONValue]] = []
        var kinds: [Bool] = []
        var keys: [String] = []
        var event = first
        while true {
            var completed: JSONValue
            switch event {
            case .value(let scalar):
                completed = scalar
            case .objectStart:
                kinds.append(true)
                objects.append([:])
                event = try nextOrEnd(after: start, maxBytes: maxBytes)
                continue
            case .arrayStart:
                kinds.append(false)
                arrays.append([])
                event = try nextOrEnd(after: start, maxBytes: maxBytes)
                continue
            case .key(let key):
                keys.append(key)
                event = try nextOrEnd(after: start, maxBytes: maxBytes)
                continue
            case .objectEnd:
                kinds.removeLast()
                completed = .object(objects.removeLast())
            case .arrayEnd:
                kinds.removeLast()
                completed = .array(arrays.removeLast())
            }
            guard let isObject = kinds.last else { return completed }
            if isObject {
                objects[objects.count - 1][keys.removeLast()] = completed
            } else {
                arrays[arrays.count - 1].append(completed)
            }
            event = try nextOrEnd(after: start, maxBytes: maxBytes)
        }
    }

    /// Reads past the value that begins with `first` (as in `value(startingWith:)`),
    /// keeping nothing of it.
    public mutating func skip(startingWith first: Event) throws(JSONStreamError) {
        var depth = 0
        var event = first
        while true {
            switch event {
            case .objectStart, .arrayStart: depth += 1
            case .objectEnd, .arrayEnd: depth -= 1
            case .key, .value: break
            }
            if depth == 0 { return }
            event = try nextOrEnd()
        }
    }

    private mutating func nextOrEnd(after start: Int = 0, maxBytes: Int = .max) throws(JSONStreamError) -> Event {
        guard let event = try next() else { throw endOfInput() }
        if offset - start > maxBytes { throw .valueTooLarge(limit: maxBytes, offset: start) }
        return event
    }

    // MARK: Structure

    private mutating func startValue() throws(JSONStreamError) -> Event {
        guard let byte = try peekNonWhitespace() else { throw endOfInput() }
        switch byte {
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            guard open.count < maxNesting else { throw .syntax(.nestingTooDeep(offset: offset)) }
            pos += 1
            let isObject = byte == UInt8(ascii: "{")
            open.append(isObject)
            state = isObject ? .firstInObject : .firstInArray
            return isObject ? .objectStart : .arrayStart
        case UInt8(ascii: "\""):
            let text = try readString()
            state = .afterValue
            return .value(.string(text))
        case UInt8(ascii: "t"):
            try expectLiteral("true")
            state = .afterValue
            return .value(.bool(true))
        case UInt8(ascii: "f"):
            try expectLiteral("false")
            state = .afterValue
            return .value(.bool(false))
        case UInt8(ascii: "n"):
            try expectLiteral("null")
            state = .afterValue
            return .value(.null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            let number = try readNumber()
            state = .afterValue
            return .value(number)
        default:
            throw .syntax(.unexpectedByte(byte, offset: offset))
        }
    }

    /// At a key (after whitespace): the key, whitespace and the `:`.
    private mutating func readKey() throws(JSONStreamError) -> Event {
        guard let byte = try peekNonWhitespace() else { throw endOfInput() }
        guard byte == UInt8(ascii: "\"") else { throw .syntax(.unexpectedByte(byte, offset: offset)) }
        let key = try readString()
        guard let colon = try peekNonWhitespace() else { throw endOfInput() }
        guard colon == UInt8(ascii: ":") else { throw .syntax(.unexpectedByte(colon, offset: offset)) }
        pos += 1
        state = .value
        return .key(key)
    }

    private mutating func close(object: Bool) -> Event {
        pos += 1
        open.removeLast()
        state = .afterValue
        return object ? .objectEnd : .arrayEnd
    }

    private func endOfInput() -> JSONStreamError {
        .syntax(.unexpectedEndOfInput(offset: offset))
    }

    // MARK: Tokens

    /// The next byte that is not whitespace (consuming the whitespace), or nil at the end.
    private mutating func peekNonWhitespace() throws(JSONStreamError) -> UInt8? {
        while true {
            var at = pos
            let stop = end
            let found: UInt8? = buffer.withUnsafeBufferPointer { bytes in
                while at < stop {
                    switch bytes[at] {
                    case 0x20, 0x09, 0x0A, 0x0D: at += 1
                    default: return bytes[at]
                    }
                }
                return nil
            }
            pos = at
            if let found { return found }
            guard try fill() else { return nil }
        }
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(JSONStreamError) {
        let text = literal.utf8Start
        for i in 0..<literal.utf8CodeUnitCount {
            if pos == end {
                guard try fill() else { throw endOfInput() }
            }
            guard buffer[pos] == text[i] else { throw .syntax(.unexpectedByte(buffer[pos], offset: offset)) }
            pos += 1
        }
    }

    /// At the opening `"`: finds the closing quote (reading on as needed), then decodes the
    /// token with the parser's own string code.
    private mutating func readString() throws(JSONStreamError) -> String {
        var length = 1  // bytes of the token seen so far, from `pos`
        while true {
            let (start, stop) = (pos, end)
            let closed: Bool = buffer.withUnsafeBufferPointer { bytes in
                while start + length < stop {
                    let byte = bytes[start + length]
                    if byte == UInt8(ascii: "\"") {
                        length += 1
                        return true
                    }
                    // A backslash escapes the next byte; UTF-8 continuation bytes are never
                    // `"` or `\`, so a byte scan finds the real end.
                    length += byte == UInt8(ascii: "\\") ? 2 : 1
                }
                return false
            }
            if closed { break }
            guard length <= maxTokenBytes else { throw .tokenTooLong(limit: maxTokenBytes, offset: offset) }
            guard try fill() else {
                // Unterminated: the parser names the first problem in what there is.
                try decodeToken(count: end - pos) { reader throws(JSONParseError) in _ = try reader.parseString() }
                throw endOfInput()
            }
        }
        guard length <= maxTokenBytes else { throw .tokenTooLong(limit: maxTokenBytes, offset: offset) }
        var text = ""
        let consumed = try decodeToken(count: length) { reader throws(JSONParseError) in text = try reader.parseString() }
        pos += consumed
        return text
    }

    /// At `-` or a digit: the bytes that can belong to a number, decoded by the parser's
    /// number code, which consumes as much as the grammar allows (the rest is left for the
    /// structure to reject, exactly as in the parser).
    private mutating func readNumber() throws(JSONStreamError) -> JSONValue {
        var length = 0
        while true {
            let (start, stop) = (pos, end)
            let stopped: Bool = buffer.withUnsafeBufferPointer { bytes in
                while start + length < stop {
                    switch bytes[start + length] {
                    case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "+"),
                        UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"):
                        length += 1
                    default:
                        return true
                    }
                }
                return false
            }
            guard length <= maxTokenBytes else { throw .tokenTooLong(limit: maxTokenBytes, offset: offset) }
            if stopped { break }
            guard try fill() else { break }
        }
        var number = JSONValue.null
        let consumed = try decodeToken(count: length) { reader throws(JSONParseError) in number = try reader.parseNumber() }
        pos += consumed
        return number
    }

    /// Runs `body` on a parser over the `count` bytes at `pos`; returns the bytes it
    /// consumed. Its errors' offsets are moved to input offsets.
    @discardableResult
    private func decodeToken(count: Int, _ body: (inout JSONReader) throws(JSONParseError) -> Void) throws(JSONStreamError) -> Int {
        let (start, from) = (offset, pos)
        let result: Result<Int, JSONParseError> = buffer.withUnsafeBufferPointer { bytes in
            var reader = JSONReader(UnsafeBufferPointer(rebasing: bytes[from..<from + count]))
            do throws(JSONParseError) {
                try body(&reader)
                return .success(reader.pos)
            } catch {
                return .failure(error.shifted(by: start))
            }
        }
        switch result {
        case .success(let consumed): return consumed
        case .failure(let error): throw .syntax(error)
        }
    }

    // MARK: Input

    /// Reads more input after the unread bytes (moved to the front first). False when the
    /// source has ended.
    private mutating func fill() throws(JSONStreamError) -> Bool {
        if sourceEnded { return false }
        if pos > 0 {
            let (unread, from) = (end - pos, pos)
            buffer.withUnsafeMutableBufferPointer { bytes in
                if unread > 0 {
                    UnsafeMutableRawPointer(bytes.baseAddress!).copyMemory(from: bytes.baseAddress! + from, byteCount: unread)
                }
            }
            base += pos
            end = unread
            pos = 0
            // A long token grew the buffer; give the memory back once it is consumed.
            if buffer.count > 4 * chunkBytes, end < chunkBytes {
                buffer = Array(buffer[0..<end])
            }
        }
        if buffer.count - end < chunkBytes {
            buffer.append(contentsOf: repeatElement(0, count: end + chunkBytes - buffer.count))
        }
        let read = source
        let from = end
        let count = chunkBytes
        let result: Result<Int, JSONStreamError> = buffer.withUnsafeMutableBytes { raw in
            do throws(JSONStreamError) {
                return .success(try read(UnsafeMutableRawBufferPointer(rebasing: raw[from..<from + count])))
            } catch {
                return .failure(error)
            }
        }
        let n = try result.get()
        guard n > 0 else {
            sourceEnded = true
            return false
        }
        precondition(n <= count, "JSONStreamReader: the source returned more bytes than asked for")
        end += n
        return true
    }
}

/// Hands out an in-memory byte array in pieces (`JSONStreamReader.init(bytes:)`).
private final class ByteCursor {
    let bytes: [UInt8]
    var position = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    func read(into target: UnsafeMutableRawBufferPointer) -> Int {
        let n = min(target.count, bytes.count - position)
        guard n > 0 else { return 0 }
        bytes.withUnsafeBytes { source in
            target.baseAddress!.copyMemory(from: source.baseAddress! + position, byteCount: n)
        }
        position += n
        return n
    }
}
