import HearthJSON

/// One thing a client said, decoded from its envelope (spec §2.2, §2.3, §3.1).
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
            guard case .string(let action)? = data["a"] else { return .ignored }
            let number: Int64?
            switch data["r"] {
            case .int(let n)? where n >= 0: number = n
            case nil: number = nil
            default: throw .malformedMessage
            }
            return .request(number: number, action: action, body: data["b"] ?? .null)
        default:
            throw .malformedMessage
        }
    }
}
