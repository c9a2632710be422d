/// Byte classes of the HTTP grammar (RFC 9110 §5.6, RFC 9112 §2), over raw bytes so the
/// parser never builds a `String` to look at syntax.
enum ASCII {
    static let cr: UInt8 = 0x0D
    static let lf: UInt8 = 0x0A
    static let space: UInt8 = 0x20
    static let tab: UInt8 = 0x09
    static let colon: UInt8 = 0x3A
    static let comma: UInt8 = 0x2C
    static let semicolon: UInt8 = 0x3B
    static let question: UInt8 = 0x3F

    /// `tchar` (RFC 9110 §5.6.2): the characters of methods, field names and codings.
    @inline(__always)
    static func isTokenChar(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
             UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
             UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }

    /// `field-vchar / SP / HTAB` (RFC 9110 §5.5), obs-text (0x80–0xFF) included. NUL, CR,
    /// LF, DEL and the other controls are refused.
    @inline(__always)
    static func isFieldValueChar(_ byte: UInt8) -> Bool {
        byte == tab || (byte >= 0x20 && byte != 0x7F)
    }

    /// Characters allowed in a request-target: visible US-ASCII (RFC 9112 §3.2, RFC 3986).
    @inline(__always)
    static func isTargetChar(_ byte: UInt8) -> Bool {
        byte > 0x20 && byte < 0x7F
    }

    @inline(__always)
    static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == space || byte == tab
    }

    @inline(__always)
    static func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    /// The value of a hex digit, or nil.
    @inline(__always)
    static func hexValue(_ byte: UInt8) -> Int? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return Int(byte &- UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return Int(byte &- UInt8(ascii: "a") &+ 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return Int(byte &- UInt8(ascii: "A") &+ 10)
        default: return nil
        }
    }

    @inline(__always)
    static func lower(_ byte: UInt8) -> UInt8 {
        (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z")) ? byte | 0x20 : byte
    }

    /// Case-insensitive comparison of raw bytes with a lowercase ASCII literal.
    @inline(__always)
    static func equalsLowercase(_ bytes: UnsafeBufferPointer<UInt8>, _ literal: StaticString) -> Bool {
        guard bytes.count == literal.utf8CodeUnitCount else { return false }
        let expected = literal.utf8Start
        for i in 0..<bytes.count where lower(bytes[i]) != expected[i] {
            return false
        }
        return true
    }

    /// Case-insensitive ASCII comparison of two strings without allocating.
    static func equalsIgnoringCase(_ a: String, _ b: String) -> Bool {
        var a = a, b = b
        return a.withUTF8 { x in
            b.withUTF8 { y in
                guard x.count == y.count else { return false }
                for i in 0..<x.count where lower(x[i]) != lower(y[i]) {
                    return false
                }
                return true
            }
        }
    }

    /// `bytes` with leading and trailing SP/HTAB removed (OWS, RFC 9110 §5.6.3).
    @inline(__always)
    static func trimmingWhitespace(_ bytes: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8> {
        var lower = 0, upper = bytes.count
        while lower < upper, isWhitespace(bytes[lower]) { lower += 1 }
        while upper > lower, isWhitespace(bytes[upper - 1]) { upper -= 1 }
        return UnsafeBufferPointer(rebasing: bytes[lower..<upper])
    }

    /// Calls `body` for each comma-separated element, OWS trimmed, empty elements skipped
    /// (the `#rule` list syntax, RFC 9110 §5.6.1). Stops early when `body` returns false.
    @inline(__always)
    static func forEachListElement(_ bytes: UnsafeBufferPointer<UInt8>, _ body: (UnsafeBufferPointer<UInt8>) -> Bool) {
        var elementStart = 0
        for i in 0...bytes.count where i == bytes.count || bytes[i] == comma {
            let element = trimmingWhitespace(UnsafeBufferPointer(rebasing: bytes[elementStart..<i]))
            elementStart = i + 1
            if element.isEmpty { continue }
            if !body(element) { return }
        }
    }
}
