/// Serialises a `JSONValue` to UTF-8 JSON bytes, appending into one buffer.
///
/// Deterministic: object members are written in Firebase key order (`FirebaseKeyOrder`,
/// docs/protocol/rest.md §1.3), so the same value always gives the same bytes (useful for
/// ETags and tests). Foundation is not used: `JSONEncoder` costs ~100 µs per 3.5 KB
/// response on this platform (docs/linux-notes.md).
///
/// * Strings: `"` and `\` are escaped; `\b \f \n \r \t` use their short escapes (as
///   JavaScript's `JSON.stringify` does) and the other control characters U+0000–U+001F are
///   written `\u00XX`; everything else, `/`, DEL and non-ASCII included, is passed through
///   as UTF-8.
/// * Numbers: see `JSONWriter+Number.swift` (integral doubles within ±2^53 as integers,
///   otherwise the shortest round-trip form in JavaScript's notation).
/// * `Style.pretty` (`print=pretty`, docs/protocol/rest.md §1.3): two-space indentation,
/// one member or
///   element per line, `"key": value` (a space after the colon only). Production Firebase
///   is reported to write `"key" : value`; no client depends on the whitespace, so Hearth
///   uses the common `JSON.stringify(v, null, 2)` layout. Empty containers stay `{}`/`[]`.
///   No trailing newline in either style.
public enum JSONWriter {
    public enum Style: Sendable, Hashable {
        /// No insignificant whitespace at all.
        case compact
        /// Indented by two spaces per level (`print=pretty`).
        case pretty
    }

    /// The JSON text of `value`.
    public static func write(_ value: JSONValue, style: Style = .compact) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(64)
        write(value, style: style, into: &output)
        return output
    }

    /// Appends the JSON text of `value` to `output` (for framing, e.g. an SSE event).
    public static func write(_ value: JSONValue, style: Style = .compact, into output: inout [UInt8]) {
        switch style {
        case .compact: writeCompact(value, into: &output)
        case .pretty: writePretty(value, indent: 0, into: &output)
        }
    }

    /// The JSON text of `value` as a `String`.
    public static func string(_ value: JSONValue, style: Style = .compact) -> String {
        String(decoding: write(value, style: style), as: UTF8.self)
    }

    // MARK: Structure

    private static func writeCompact(_ value: JSONValue, into out: inout [UInt8]) {
        switch value {
        case .array(let elements):
            out.append(UInt8(ascii: "["))
            for (i, element) in elements.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                writeCompact(element, into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for (i, member) in orderedMembers(members).enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                writeString(member.key, into: &out)
                out.append(UInt8(ascii: ":"))
                writeCompact(member.value, into: &out)
            }
            out.append(UInt8(ascii: "}"))
        default:
            writeScalar(value, into: &out)
        }
    }

    private static func writePretty(_ value: JSONValue, indent: Int, into out: inout [UInt8]) {
        switch value {
        case .array(let elements) where !elements.isEmpty:
            out.append(UInt8(ascii: "["))
            for (i, element) in elements.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                newline(indent: indent + 1, into: &out)
                writePretty(element, indent: indent + 1, into: &out)
            }
            newline(indent: indent, into: &out)
            out.append(UInt8(ascii: "]"))
        case .object(let members) where !members.isEmpty:
            out.append(UInt8(ascii: "{"))
            for (i, member) in orderedMembers(members).enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                newline(indent: indent + 1, into: &out)
                writeString(member.key, into: &out)
                out.append(UInt8(ascii: ":"))
                out.append(UInt8(ascii: " "))
                writePretty(member.value, indent: indent + 1, into: &out)
            }
            newline(indent: indent, into: &out)
            out.append(UInt8(ascii: "}"))
        default:
            writeCompact(value, into: &out)
        }
    }

    private static func newline(indent: Int, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\n"))
        out.append(contentsOf: repeatElement(UInt8(ascii: " "), count: 2 * indent))
    }

    /// Members in Firebase key order; each key's integer form is parsed once. Sorts
    /// dictionary indices (plain integers), not key/value pairs, so the sort itself does
    /// no reference counting.
    private static func orderedMembers(_ members: [JSONKey: JSONValue]) -> [(key: String, value: JSONValue)] {
        if members.count < 2 { return members.map { ($0.key.string, $0.value) } }
        var order = members.indices.map { (index: $0, int: FirebaseKeyOrder.int32Value(members.keys[$0].string)) }
        order.sort { a, b in
            FirebaseKeyOrder.compare(members.keys[a.index].string, a.int, members.keys[b.index].string, b.int) < 0
        }
        return order.map { let member = members[$0.index]; return (member.key.string, member.value) }
    }

    private static func writeScalar(_ value: JSONValue, into out: inout [UInt8]) {
        switch value {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(true): out.append(contentsOf: "true".utf8)
        case .bool(false): out.append(contentsOf: "false".utf8)
        case .int(let n): writeInt(n, into: &out)
        case .double(let d): writeDouble(d, into: &out)
        case .string(let s): writeString(s, into: &out)
        case .array, .object: writeCompact(value, into: &out)
        }
    }

    // MARK: Strings

    /// Appends `s` as a quoted, escaped JSON string.
    public static func writeString(_ s: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        if let done: Void = s.utf8.withContiguousStorageIfAvailable({ escape($0, into: &out) }) {
            _ = done
        } else {
            Array(s.utf8).withUnsafeBufferPointer { escape($0, into: &out) }
        }
        out.append(UInt8(ascii: "\""))
    }

    /// Copies runs of bytes that need no escape in one go.
    static func escape(_ bytes: UnsafeBufferPointer<UInt8>, into out: inout [UInt8]) {
        var runStart = 0
        for i in 0..<bytes.count {
            let byte = bytes[i]
            guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
            if runStart < i { out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<i])) }
            runStart = i + 1
            out.append(UInt8(ascii: "\\"))
            switch byte {
            case UInt8(ascii: "\""): out.append(UInt8(ascii: "\""))
            case UInt8(ascii: "\\"): out.append(UInt8(ascii: "\\"))
            case 0x08: out.append(UInt8(ascii: "b"))
            case 0x0C: out.append(UInt8(ascii: "f"))
            case 0x0A: out.append(UInt8(ascii: "n"))
            case 0x0D: out.append(UInt8(ascii: "r"))
            case 0x09: out.append(UInt8(ascii: "t"))
            default:
                out.append(UInt8(ascii: "u"))
                out.append(UInt8(ascii: "0"))
                out.append(UInt8(ascii: "0"))
                out.append(hexDigit(byte >> 4))
                out.append(hexDigit(byte & 0xF))
            }
        }
        if runStart < bytes.count { out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart...])) }
    }

    /// Lower-case hex digit for 0...15.
    private static func hexDigit(_ v: UInt8) -> UInt8 {
        v < 10 ? UInt8(ascii: "0") + v : UInt8(ascii: "a") + v - 10
    }
}
