/// Percent-decoding of URL components (RFC 3986 §2.1). In query strings `+` is a space
/// (HTML form encoding, which curl `--data-urlencode` and Python `requests` send).
enum PercentDecoding {
    static func decode(_ text: Substring, plusIsSpace: Bool) -> String? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var it = text.utf8.makeIterator()
        while let b = it.next() {
            switch b {
            case UInt8(ascii: "%"):
                guard let h = it.next().flatMap(hexValue), let l = it.next().flatMap(hexValue) else { return nil }
                bytes.append(h << 4 | l)
            case UInt8(ascii: "+") where plusIsSpace:
                bytes.append(UInt8(ascii: " "))
            default:
                bytes.append(b)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ b: UInt8) -> UInt8? {
        switch b {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return b - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return b - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return b - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
