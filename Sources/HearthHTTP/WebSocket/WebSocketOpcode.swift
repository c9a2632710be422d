/// The frame opcodes RFC 6455 defines (§5.2); the others are reserved and refused.
public enum WebSocketOpcode: UInt8, Sendable {
    case continuation = 0x0
    case text = 0x1
    case binary = 0x2
    case close = 0x8
    case ping = 0x9
    case pong = 0xA

    /// Close, ping and pong (§5.5): never fragmented, at most 125 bytes of payload.
    var isControl: Bool { rawValue & 0x8 != 0 }
}

/// One thing the peer said, as `WebSocketFrameParser.next()` hands it out: a whole message
/// (fragments already joined, text already checked as UTF-8) or a control frame.
public enum WebSocketEvent: Sendable, Equatable {
    case text([UInt8])
    case binary([UInt8])
    case ping([UInt8])
    case pong([UInt8])
    /// The peer's close frame: its code (nil for an empty body, which means 1005, "no status")
    /// and its reason.
    case close(code: WebSocketCloseCode?, reason: String)
}
