import HearthJSON

/// One thing a client said, decoded from its envelope (docs/protocol/wire.md §2.2, §2.3,
/// §3.1).
public enum WireInbound: Sendable, Equatable {
    /// Control `p`: answer with a pong (`WireOutbound.pong`).
    case ping
    /// Another control message (`a`, `n`: transport upgrades, which Hearth does not do).
    case control(type: String)
    /// A data-layer request. `number` is the client's `r` (absent for none; 0 is valid,
    /// Android counts from 0), echoed in the response.
    case request(number: Int64?, action: String, body: JSONValue)
    /// A data-layer message without an action (nothing to do).
    case ignored

    /// Decodes one whole message (after chunk joining).
    public static func decode(_ bytes: [UInt8]) throws(WireError) -> WireInbound {
        let value: JSONValue
        do {
            value = try JSONParser.parse(bytes)
        } catch {
            if case .nestingTooDeep = error { throw .nestingTooDeep(number: requestNumber(in: bytes)) }
            throw .malformedMessage
        }
        guard case .object(let envelope) = value, case .string(let layer)? = envelope["t"],
              let payload = envelope["d"] else { throw .malformedMessage }
        switch layer {
        case "c":
            guard case .object(let control) = payload, case .string(let type)? = control["t"] else {
                throw .malformedMessage
            }
            return type == "p" ? .ping : .control(type: type)
        case "d":
            guard case .object(let data) = payload else { throw .malformedMessage }
            let number: Int64?
            switch data["r"] {
            case .int(let n)? where n >= 0: number = n
            case nil: number = nil
            default: throw .malformedMessage
            }
            // No action: nothing to run. A numbered one is still answered (an empty action
            // is unknown), so its client does not wait for an answer that never comes.
            guard case .string(let action)? = data["a"] else {
                return number.map { .request(number: $0, action: "", body: .null) } ?? .ignored
            }
            return .request(number: number, action: action, body: data["b"] ?? .null)
        default:
            throw .malformedMessage
        }
    }

    /// The request number (`d.r`, a non-negative integer) of a message that could not be
    /// parsed whole, found by one pass over its bytes that tracks only strings and nesting
    /// (no values are built, so any depth is fine): a member `r` of the object that is the
    /// top-level member `d`. Nil when there is none.
    public static func requestNumber(in bytes: [UInt8]) -> Int64? {
        var depth = 0
        var inString = false, escaped = false
        var stringStart = 0
        var lastString: ArraySlice<UInt8> = []
        var topKey: ArraySlice<UInt8> = []
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                    lastString = bytes[stringStart..<index]
                }
                index += 1
                continue
            }
            switch byte {
            case UInt8(ascii: "\""):
                inString = true
                stringStart = index + 1
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                depth += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth -= 1
            case UInt8(ascii: ":") where depth == 1:
                topKey = lastString
            case UInt8(ascii: ":") where depth == 2 && topKey.elementsEqual("d".utf8) && lastString.elementsEqual("r".utf8):
                var digits = index + 1
                while digits < bytes.count, bytes[digits] == 0x20 || bytes[digits] == 0x09 || bytes[digits] == 0x0A || bytes[digits] == 0x0D {
                    digits += 1
                }
                var number: Int64 = 0
                var seen = 0
                while digits < bytes.count, bytes[digits] >= UInt8(ascii: "0"), bytes[digits] <= UInt8(ascii: "9"), seen < 18 {
                    number = number * 10 + Int64(bytes[digits] - UInt8(ascii: "0"))
                    digits += 1
                    seen += 1
                }
                return seen > 0 ? number : nil
            default:
                break
            }
            index += 1
        }
        return nil
    }
}
