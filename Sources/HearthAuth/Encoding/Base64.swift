/// Base64 (RFC 4648 §4) and base64url (§5), strict on decode.
///
/// Written here rather than taken from Foundation, which Hearth keeps off its paths
/// (docs/linux-notes.md). Decoding is strict so that each byte string has exactly one
/// accepted text form: no whitespace, no characters from the other alphabet, padding only
/// where the caller allows it, and the unused low bits of the last character must be zero.
/// Without that, `abc` and `abd` could decode to the same bytes and a JWT would have
/// several valid spellings.
public enum Base64 {
    /// Which of RFC 4648's two alphabets.
    public enum Alphabet: Sendable, Hashable {
        /// `A–Z a–z 0–9 + /` (§4): PHC strings, Firebase exports.
        case standard
        /// `A–Z a–z 0–9 - _` (§5): JWTs, JWKs, refresh tokens.
        case url
    }

    /// Whether `=` padding is written (encode) or accepted (decode).
    public enum Padding: Sendable, Hashable {
        /// Never written; rejected on decode (JWS, PHC).
        case none
        /// Always written; on decode, required whenever the length is not a multiple of 4.
        case required
        /// Decode only: accepted when correct, not required (Firebase exports, hand-typed keys).
        case optional
    }

    private static let standardTable = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    private static let urlTable = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// The base64 text of `bytes`. `.optional` padding encodes like `.required`.
    public static func encode(_ bytes: some Collection<UInt8>, alphabet: Alphabet = .standard, padding: Padding = .required) -> String {
        let table = alphabet == .standard ? standardTable : urlTable
        let input = Array(bytes)
        var out: [UInt8] = []
        out.reserveCapacity((input.count + 2) / 3 * 4)
        var i = 0
        while i + 3 <= input.count {
            let v = UInt32(input[i]) << 16 | UInt32(input[i + 1]) << 8 | UInt32(input[i + 2])
            out.append(table[Int(v >> 18 & 63)])
            out.append(table[Int(v >> 12 & 63)])
            out.append(table[Int(v >> 6 & 63)])
            out.append(table[Int(v & 63)])
            i += 3
        }
        let rest = input.count - i
        if rest > 0 {
            var v = UInt32(input[i]) << 16
            if rest == 2 { v |= UInt32(input[i + 1]) << 8 }
            out.append(table[Int(v >> 18 & 63)])
            out.append(table[Int(v >> 12 & 63)])
            if rest == 2 { out.append(table[Int(v >> 6 & 63)]) }
            if padding != .none { out.append(contentsOf: repeatElement(UInt8(ascii: "="), count: 3 - rest)) }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes `text` encodes, or nil when it is not strictly valid for `alphabet` and
    /// `padding` (see the type's comment).
    public static func decode(_ text: some StringProtocol, alphabet: Alphabet = .standard, padding: Padding = .required) -> [UInt8]? {
        var chars = Array(text.utf8)
        // Strip padding, checking that it is allowed and of the right amount.
        var padCount = 0
        while chars.last == UInt8(ascii: "=") {
            chars.removeLast()
            padCount += 1
        }
        switch padding {
        case .none:
            guard padCount == 0 else { return nil }
        case .required:
            guard (chars.count + padCount) % 4 == 0, padCount == (4 - chars.count % 4) % 4 else { return nil }
        case .optional:
            if padCount > 0 {
                guard (chars.count + padCount) % 4 == 0, padCount == (4 - chars.count % 4) % 4 else { return nil }
            }
        }
        // A lone final character carries only 6 bits: never a valid encoding.
        guard chars.count % 4 != 1 else { return nil }

        var out: [UInt8] = []
        out.reserveCapacity(chars.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        for c in chars {
            guard let v = value(of: c, alphabet: alphabet) else { return nil }
            accumulator = accumulator << 6 | UInt32(v)
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
                accumulator &= (1 << UInt32(bits)) - 1
            }
        }
        // Leftover bits (2 or 4) must be zero: the canonical spelling only.
        guard accumulator == 0 else { return nil }
        return out
    }

    private static func value(of c: UInt8, alphabet: Alphabet) -> UInt8? {
        switch c {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): return c - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): return c - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0") + 52
        case UInt8(ascii: "+") where alphabet == .standard: return 62
        case UInt8(ascii: "/") where alphabet == .standard: return 63
        case UInt8(ascii: "-") where alphabet == .url: return 62
        case UInt8(ascii: "_") where alphabet == .url: return 63
        default: return nil
        }
    }
}

extension Base64 {
    /// Unpadded base64url (RFC 7515 §2 "Base64url Encoding"), as JWS and JWK use it.
    static func urlEncode(_ bytes: some Collection<UInt8>) -> String {
        encode(bytes, alphabet: .url, padding: .none)
    }

    /// Strict unpadded base64url decoding.
    static func urlDecode(_ text: some StringProtocol) -> [UInt8]? {
        decode(text, alphabet: .url, padding: .none)
    }
}
