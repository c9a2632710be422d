/// Checks UTF-8 incrementally (RFC 3629 §4, the table of well-formed byte sequences), so a
/// text message split over fragments is judged as the fragments arrive (RFC 6455 §8.1:
/// fail fast), including a sequence cut between two fragments.
struct UTF8Validator: Equatable {
    /// Continuation bytes the current sequence still needs.
    private var needed = 0
    /// The range the next continuation byte must fall in (narrower after E0, ED, F0, F4,
    /// which is how overlong forms, surrogates and code points past U+10FFFF are refused).
    private var lower: UInt8 = 0x80
    private var upper: UInt8 = 0xBF

    /// True when no sequence is cut off at the end of what was fed.
    var isComplete: Bool { needed == 0 }

    /// Feeds more bytes; false at the first byte that cannot be part of valid UTF-8.
    mutating func feed<Bytes: Sequence>(_ bytes: Bytes) -> Bool where Bytes.Element == UInt8 {
        for byte in bytes {
            if needed > 0 {
                guard byte >= lower && byte <= upper else { return false }
                needed -= 1
                lower = 0x80
                upper = 0xBF
                continue
            }
            switch byte {
            case 0x00...0x7F: continue
            case 0xC2...0xDF: needed = 1
            case 0xE0: needed = 2; lower = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: needed = 2
            case 0xED: needed = 2; upper = 0x9F
            case 0xF0: needed = 3; lower = 0x90
            case 0xF1...0xF3: needed = 3
            case 0xF4: needed = 3; upper = 0x8F
            default: return false
            }
        }
        return true
    }

    /// Whether `bytes` are one whole, valid UTF-8 text.
    static func isValid<Bytes: Sequence>(_ bytes: Bytes) -> Bool where Bytes.Element == UInt8 {
        var validator = UTF8Validator()
        return validator.feed(bytes) && validator.isComplete
    }
}
