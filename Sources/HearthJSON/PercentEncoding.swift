/// Percent-decoding of URL components (RFC 3986 §2.1), shared by path and query parsing.
public enum PercentEncoding {
    /// Decodes `%XX` escapes (either case). With `plusIsSpace`, `+` becomes a space (HTML
    /// form encoding, as curl `--data-urlencode` and Python `requests` send query values).
    /// Nil for a malformed escape or bytes that are not well-formed UTF-8.
    public static func decode<Bytes: Collection<UInt8>>(_ bytes: Bytes, plusIsSpace: Bool = false) -> String? {
        // One pass for both questions: anything to decode, and anything past ASCII.
        var escaped = false
        var ascii = true
        for byte in bytes {
            if byte == UInt8(ascii: "%") || (plusIsSpace && byte == UInt8(ascii: "+")) {
                escaped = true
                break
            }
            if byte >= 0x80 { ascii = false }
        }
        if !escaped {
            // ASCII is always well-formed UTF-8: no second pass to check it. Otherwise, no
            // copy into an array first.
            return ascii ? String(decoding: bytes, as: UTF8.self) : String(validatingUTF8Bytes: bytes)
        }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var i = bytes.startIndex
        while i < bytes.endIndex {
            let byte = bytes[i]
            if byte == UInt8(ascii: "%") {
                let h = bytes.index(after: i)
                guard h < bytes.endIndex, let high = hexValue(bytes[h]) else { return nil }
                let l = bytes.index(after: h)
                guard l < bytes.endIndex, let low = hexValue(bytes[l]) else { return nil }
                out.append(high << 4 | low)
                i = bytes.index(after: l)
            } else {
                out.append(plusIsSpace && byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
                i = bytes.index(after: i)
            }
        }
        return String(validatingUTF8Bytes: out)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
