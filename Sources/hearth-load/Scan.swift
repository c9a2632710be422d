#if canImport(Glibc)
import Glibc
#endif

// The pure parts of the load generator: byte scans over what the server sends, no
// syscalls, no clocks. Unit tested from literals (Tests/HearthLoadTests).

/// Finds a write's marker (`<prefix><digits>`, the writer puts `<prefix><seq>.` into every
/// body) in an event's or message's bytes: the only per-message work a subscriber does
/// once it is live, as harness.py's `on_event` (first occurrence, then the digits).
struct MarkerScanner: Sendable {
    let prefix: [UInt8]

    init(prefix: [UInt8]) {
        precondition(!prefix.isEmpty, "an empty marker prefix would match everywhere")
        self.prefix = prefix
    }

    /// The sequence number after the first occurrence of the prefix; nil when the prefix is
    /// absent, or not followed by a digit, or by more digits than a write number has.
    func sequence(in bytes: UnsafeRawBufferPointer) -> Int? {
        guard let at = Self.find(prefix, in: bytes) else { return nil }
        var index = at + prefix.count
        var value = 0
        var digits = 0
        while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 {
            value = value * 10 + Int(bytes[index] - 0x30)
            digits += 1
            if digits > Limits.maxMarkerDigits { return nil }
            index += 1
        }
        return digits == 0 ? nil : value
    }

    func sequence(in bytes: [UInt8]) -> Int? {
        bytes.withUnsafeBytes { sequence(in: $0) }
    }

    /// The offset of the first occurrence of `needle` in `haystack` (memchr for its first
    /// byte, then a compare).
    static func find(_ needle: [UInt8], in haystack: UnsafeRawBufferPointer, from start: Int = 0) -> Int? {
        guard let base = haystack.baseAddress, !needle.isEmpty else { return nil }
        let first = Int32(needle[0])
        var position = start
        let last = haystack.count - needle.count
        while position <= last {
            guard let hit = memchr(base + position, first, last - position + 1) else { return nil }
            let offset = base.distance(to: UnsafeRawPointer(hit))
            let matched = needle.withUnsafeBytes { memcmp(base + offset, $0.baseAddress!, needle.count) == 0 }
            if matched { return offset }
            position = offset + 1
        }
        return nil
    }
}

/// One WebSocket frame head from the server (RFC 6455 §5.2).
enum FrameHead: Equatable {
    /// Fewer bytes than the head (or its extended length) needs.
    case incomplete
    case frame(opcode: UInt8, final: Bool, headLength: Int, payloadLength: Int)
    /// A protocol violation: the message says which.
    case invalid(String)

    static let continuation: UInt8 = 0x0
    static let text: UInt8 = 0x1
    static let binary: UInt8 = 0x2
    static let close: UInt8 = 0x8
    static let ping: UInt8 = 0x9
    static let pong: UInt8 = 0xA

    /// Parses the head at the start of `bytes`; the payload is the `payloadLength` bytes
    /// after `headLength` (they may not all be there yet).
    static func parse(_ bytes: UnsafeRawBufferPointer) -> FrameHead {
        guard bytes.count >= 2 else { return .incomplete }
        let first = bytes[0], second = bytes[1]
        if second & 0x80 != 0 { return .invalid("masked frame from the server") }
        if first & 0x70 != 0 { return .invalid("reserved bits set") }
        guard let (declared, head) = declaredLength(bytes) else { return .incomplete }
        guard declared <= UInt64(Limits.maxMessageBytes) else { return .invalid("frame of \(declared) bytes") }
        let length = Int(declared)
        let opcode = first & 0x0F
        if opcode >= 0x8 && (length > 125 || first & 0x80 == 0) { return .invalid("bad control frame") }
        return .frame(opcode: opcode, final: first & 0x80 != 0, headLength: head, payloadLength: length)
    }

    /// The payload length a frame's head declares (7 bits; or 126 and 16 bits; or 127 and
    /// 64 bits, RFC 6455 §5.2) and the head's bytes before any masking key; nil when the
    /// bytes end first.
    static func declaredLength(_ bytes: UnsafeRawBufferPointer) -> (length: UInt64, headLength: Int)? {
        guard bytes.count >= 2 else { return nil }
        switch bytes[1] & 0x7F {
        case 126:
            guard bytes.count >= 4 else { return nil }
            return (UInt64(bytes[2]) << 8 | UInt64(bytes[3]), 4)
        case 127:
            guard bytes.count >= 10 else { return nil }
            var value: UInt64 = 0
            for index in 2..<10 { value = value << 8 | UInt64(bytes[index]) }
            return (value, 10)
        case let length:
            return (UInt64(length), 2)
        }
    }

    /// A frame's head: final, `opcode`, `length` in the shortest form, the mask bit when
    /// `masked` (the key is the caller's to append).
    static func encode(opcode: UInt8, length: Int, masked: Bool) -> [UInt8] {
        let mask: UInt8 = masked ? 0x80 : 0
        if length < 126 { return [0x80 | opcode, mask | UInt8(length)] }
        if length < 65_536 { return [0x80 | opcode, mask | 126, UInt8(length >> 8), UInt8(length & 0xFF)] }
        return [0x80 | opcode, mask | 127] + stride(from: 56, through: 0, by: -8).map { UInt8((length >> $0) & 0xFF) }
    }
}

/// `Transfer-Encoding: chunked` undone incrementally: feed it what arrived, it hands out
/// the data bytes in place (slices of the input), keeping only a few bytes of state across
/// reads (a size line may be split anywhere).
struct ChunkedDecoder: Equatable {
    enum State: Equatable {
        case size(value: Int, digits: Int, inExtension: Bool)
        case data(remaining: Int)
        /// The CRLF after a chunk's data: bytes still to skip.
        case dataEnd(remaining: Int)
        /// After the zero-size chunk: trailer lines up to the blank line that ends the body.
        case trailer(lineHasContent: Bool)
        /// The blank line after the zero-size chunk was read: the body is complete.
        case finished
    }

    private(set) var state = State.size(value: 0, digits: 0, inExtension: false)

    var finished: Bool { state == .finished }

    /// Decodes `input`; calls `emit` with each run of data bytes. Throws on a malformed
    /// size line.
    mutating func feed(_ input: UnsafeRawBufferPointer, emit: (UnsafeRawBufferPointer) -> Void) throws(LoadError) {
        var index = 0
        while index < input.count {
            switch state {
            case .finished:
                return
            case .data(let remaining):
                let take = min(remaining, input.count - index)
                emit(UnsafeRawBufferPointer(rebasing: input[index..<(index + take)]))
                index += take
                state = remaining == take ? .dataEnd(remaining: 2) : .data(remaining: remaining - take)
            case .trailer(let lineHasContent):
                let byte = input[index]
                index += 1
                if byte == UInt8(ascii: "\n") {
                    state = lineHasContent ? .trailer(lineHasContent: false) : .finished
                } else if byte != UInt8(ascii: "\r") {
                    state = .trailer(lineHasContent: true)
                }
            case .dataEnd(let remaining):
                index += 1
                state = remaining == 1 ? .size(value: 0, digits: 0, inExtension: false) : .dataEnd(remaining: remaining - 1)
            case .size(let value, let digits, let inExtension):
                let byte = input[index]
                index += 1
                if byte == UInt8(ascii: "\n") {
                    guard digits > 0 else { throw LoadError.protocolViolation("empty chunk size") }
                    state = value == 0 ? .trailer(lineHasContent: false) : .data(remaining: value)
                } else if inExtension || byte == UInt8(ascii: "\r") {
                    continue
                } else if byte == UInt8(ascii: ";") {
                    state = .size(value: value, digits: digits, inExtension: true)
                } else if let digit = Self.hexValue(byte), digits < Limits.maxChunkSizeDigits {
                    state = .size(value: value << 4 | digit, digits: digits + 1, inExtension: false)
                } else {
                    throw LoadError.protocolViolation("bad chunk size line")
                }
            }
        }
    }

    private static func hexValue(_ byte: UInt8) -> Int? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return Int(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return Int(byte - UInt8(ascii: "a")) + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return Int(byte - UInt8(ascii: "A")) + 10
        default: return nil
        }
    }
}

/// The head of an HTTP/1.1 response: status, how the body is framed.
struct ResponseHead: Equatable {
    let status: Int
    /// Bytes of the head including its blank line.
    let length: Int
    let contentLength: Int?
    let chunked: Bool

    static let terminator: [UInt8] = Array("\r\n\r\n".utf8)

    /// nil while the blank line has not arrived; throws on a head that is not HTTP.
    static func parse(_ bytes: UnsafeRawBufferPointer) throws(LoadError) -> ResponseHead? {
        guard let end = MarkerScanner.find(terminator, in: bytes) else {
            if bytes.count > Limits.maxResponseHeadBytes { throw LoadError.protocolViolation("response head over \(Limits.maxResponseHeadBytes) bytes") }
            return nil
        }
        let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[0..<end]), as: UTF8.self)
        let lines = text.split(separator: "\r\n", omittingEmptySubsequences: false)
        let statusParts = lines[0].split(separator: " ", maxSplits: 2)
        guard statusParts.count >= 2, statusParts[0].hasPrefix("HTTP/1."), let status = Int(statusParts[1]) else {
            throw LoadError.protocolViolation("not an HTTP/1.1 status line")
        }
        var contentLength: Int?
        var chunked = false
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingSpaces()
            if name == "content-length" {
                guard let number = Int(value), number >= 0 else { throw LoadError.protocolViolation("bad Content-Length") }
                contentLength = number
            } else if name == "transfer-encoding" {
                chunked = value.lowercased().contains("chunked")
            }
        }
        return ResponseHead(status: status, length: end + terminator.count, contentLength: contentLength, chunked: chunked)
    }
}

extension Substring {
    func trimmingSpaces() -> Substring {
        var slice = self
        while let first = slice.first, first == " " || first == "\t" { slice = slice.dropFirst() }
        while let last = slice.last, last == " " || last == "\t" { slice = slice.dropLast() }
        return slice
    }
}

/// What a wire message that is not a push says, found by a scan (no JSON parse).
enum WireControl: Equatable {
    case handshake
    /// An answer to request `number` with status `status` ("ok" or an error).
    case answer(number: Int, status: String)
    case other

    private static let handshakeMark = Array(#""t":"h""#.utf8)
    private static let numberMark = Array(#""r":"#.utf8)
    private static let statusMark = Array(#""s":""#.utf8)

    static func classify(_ message: UnsafeRawBufferPointer) -> WireControl {
        if MarkerScanner.find(handshakeMark, in: message) != nil { return .handshake }
        guard let numberAt = MarkerScanner.find(numberMark, in: message),
              let statusAt = MarkerScanner.find(statusMark, in: message) else { return .other }
        var index = numberAt + numberMark.count
        var number = 0, digits = 0
        while index < message.count, message[index] >= 0x30, message[index] <= 0x39, digits < Limits.maxMarkerDigits {
            number = number * 10 + Int(message[index] - 0x30)
            digits += 1
            index += 1
        }
        guard digits > 0 else { return .other }
        let start = statusAt + statusMark.count
        var end = start
        while end < message.count, message[end] != UInt8(ascii: "\""), end - start < Limits.maxStatusBytes { end += 1 }
        return .answer(number: number, status: String(decoding: UnsafeRawBufferPointer(rebasing: message[start..<end]), as: UTF8.self))
    }
}

/// The name of an SSE event (its `event:` line), or nil when it has none.
func sseEventName(_ event: UnsafeRawBufferPointer) -> Substring? {
    let text = String(decoding: event.prefix(Limits.maxEventNameScan), as: UTF8.self)
    for line in text.split(separator: "\n") where line.hasPrefix("event:") {
        return line.dropFirst(6).trimmingSpaces()
    }
    return nil
}

/// harness.py's `pct`: the value at rank round(p/100 × n + 0.5) (round half to even, as
/// Python's round), 1-based, clamped; nil for no values. `sorted` must be ascending.
func percentile(_ sorted: [Double], _ p: Double) -> Double? {
    guard !sorted.isEmpty else { return nil }
    let rank = Int((p / 100.0 * Double(sorted.count) + 0.5).rounded(.toNearestOrEven)) - 1
    return sorted[max(0, min(sorted.count - 1, rank))]
}

/// Python's round(value, places): half to even on the decimal value (close enough for
/// figures in ms and %: the binary value decides, as in Python).
func rounded(_ value: Double, _ places: Int) -> Double {
    var scale = 1.0
    for _ in 0..<places { scale *= 10 }
    return (value * scale).rounded(.toNearestOrEven) / scale
}
