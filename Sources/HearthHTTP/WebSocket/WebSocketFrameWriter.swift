/// Frames the server sends (RFC 6455 §5.2): always unfragmented and, as §5.1 requires of a
/// server, never masked. The Firebase adapter sends whole text messages; fragmentation on
/// our side would only add work for the client.
enum WebSocketFrameWriter {
    /// Appends one final frame carrying `payload` to `output`.
    static func append<Payload: Collection>(_ opcode: WebSocketOpcode, _ payload: Payload, to output: inout [UInt8])
    where Payload.Element == UInt8 {
        output.append(0x80 | opcode.rawValue)
        let count = payload.count
        if count < 126 {
            output.append(UInt8(count))
        } else if count <= 0xFFFF {
            output.append(126)
            output.append(UInt8(count >> 8))
            output.append(UInt8(count & 0xFF))
        } else {
            output.append(127)
            for shift in stride(from: 56, through: 0, by: -8) { output.append(UInt8(truncatingIfNeeded: UInt64(count) >> UInt64(shift))) }
        }
        output.append(contentsOf: payload)
    }

    static func frame<Payload: Collection>(_ opcode: WebSocketOpcode, _ payload: Payload) -> [UInt8] where Payload.Element == UInt8 {
        var output: [UInt8] = []
        output.reserveCapacity(payload.count + 10)
        append(opcode, payload, to: &output)
        return output
    }

    /// A text frame for each of `texts`, back to back in one buffer: what goes out as one
    /// unit (the wire protocol's chunks of one message).
    static func textFrames(_ texts: [[UInt8]]) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(texts.reduce(0) { $0 + $1.count + 10 })
        for text in texts { append(.text, text, to: &output) }
        return output
    }

    /// A close frame with `code` and `reason`, the reason cut to fit the 125-byte control
    /// payload (at a character boundary, so it stays valid UTF-8).
    static func close(_ code: WebSocketCloseCode, reason: String = "") -> [UInt8] {
        var payload: [UInt8] = [UInt8(code.rawValue >> 8), UInt8(code.rawValue & 0xFF)]
        var room = WebSocketLimits.maxControlPayloadBytes - 2
        for character in reason {
            let bytes = Array(character.utf8)
            guard bytes.count <= room else { break }
            payload.append(contentsOf: bytes)
            room -= bytes.count
        }
        return frame(.close, payload)
    }
}
