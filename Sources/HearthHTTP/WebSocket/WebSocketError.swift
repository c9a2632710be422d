/// Why a peer's frames were refused. A closed set: each case knows the close code it is
/// answered with (RFC 6455 §7.4.1); the close frame names the rule broken, never the
/// peer's bytes.
public enum WebSocketError: Error, Sendable, Equatable, CaseIterable {
    /// A client frame without the mask bit (§5.1: the server MUST close).
    case unmaskedFrame
    /// RSV1–3 set while no extension was negotiated (§5.2).
    case reservedBitsSet
    /// An opcode RFC 6455 reserves (3–7, 0xB–0xF) (§5.2).
    case unknownOpcode
    /// A close, ping or pong without FIN (§5.5: control frames MUST NOT be fragmented).
    case fragmentedControlFrame
    /// A control frame whose payload is over 125 bytes (§5.5).
    case controlFrameTooLong
    /// A continuation frame with no fragmented message in progress (§5.4).
    case unexpectedContinuation
    /// A new text or binary frame while a fragmented message is unfinished (§5.4).
    case expectedContinuation
    /// A 64-bit payload length with its most significant bit set (§5.2).
    case invalidLength
    /// A close frame with a one-byte payload (§5.5.1: a body starts with a two-byte code).
    case invalidClosePayload
    /// A close code a peer may not send (§7.4.2).
    case invalidCloseCode
    /// A text message or close reason that is not valid UTF-8 (§8.1), checked across
    /// fragments as they arrive.
    case invalidUTF8
    /// A message (all its fragments together) over `WebSocketLimits.maxMessageBytes`.
    case messageTooBig

    /// The code of the close frame that answers this error.
    public var closeCode: WebSocketCloseCode {
        switch self {
        case .invalidUTF8: return .invalidPayload
        case .messageTooBig: return .messageTooBig
        case .unmaskedFrame, .reservedBitsSet, .unknownOpcode, .fragmentedControlFrame, .controlFrameTooLong,
             .unexpectedContinuation, .expectedContinuation, .invalidLength, .invalidClosePayload, .invalidCloseCode:
            return .protocolError
        }
    }

    /// The close reason sent: what rule the peer broke, in words a developer can act on
    /// (never the peer's bytes).
    public var closeReason: String {
        switch self {
        case .unmaskedFrame: return "Client frames must be masked (RFC 6455 section 5.1)"
        case .reservedBitsSet: return "Reserved bits set, but no extension was negotiated"
        case .unknownOpcode: return "Unknown frame opcode"
        case .fragmentedControlFrame: return "Control frames (close, ping, pong) must not be fragmented"
        case .controlFrameTooLong: return "Control frame payload over 125 bytes"
        case .unexpectedContinuation: return "Continuation frame without a message to continue"
        case .expectedContinuation: return "New message before the fragmented one was finished"
        case .invalidLength: return "Invalid frame length"
        case .invalidClosePayload: return "Close frame body must start with a two-byte code"
        case .invalidCloseCode: return "Close code not allowed on the wire"
        case .invalidUTF8: return "Text is not valid UTF-8"
        case .messageTooBig: return "Message larger than this server accepts; send less at once"
        }
    }
}
