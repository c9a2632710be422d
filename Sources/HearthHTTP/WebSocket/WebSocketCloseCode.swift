/// A close status code (RFC 6455 §7.4). Hearth sends only the named ones; it accepts from a
/// peer every code §7.4.2 allows on the wire.
public struct WebSocketCloseCode: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: UInt16

    public init(rawValue: UInt16) {
        self.rawValue = rawValue
    }

    /// The purpose of the connection is fulfilled.
    public static let normal = WebSocketCloseCode(rawValue: 1000)
    /// The server is going away (shutdown) or the peer left.
    public static let goingAway = WebSocketCloseCode(rawValue: 1001)
    /// The peer broke the framing rules (§5, §7.4.1).
    public static let protocolError = WebSocketCloseCode(rawValue: 1002)
    /// A data type this endpoint does not accept (e.g. binary where only text is spoken).
    public static let unsupportedData = WebSocketCloseCode(rawValue: 1003)
    /// A text message (or close reason) that is not valid UTF-8 (§8.1).
    public static let invalidPayload = WebSocketCloseCode(rawValue: 1007)
    /// A message that violates the application's policy (repeated abuse, a reader that
    /// fell too far behind).
    public static let policyViolation = WebSocketCloseCode(rawValue: 1008)
    /// A message larger than `WebSocketLimits.maxMessageBytes`.
    public static let messageTooBig = WebSocketCloseCode(rawValue: 1009)
    /// The server hit an unexpected condition.
    public static let internalError = WebSocketCloseCode(rawValue: 1011)
    /// The server is overloaded for now (IANA registry): the client may reconnect and try
    /// again later. Sent when the server-wide `HTTPLimits.maxIncompleteBytes` is reached.
    public static let tryAgainLater = WebSocketCloseCode(rawValue: 1013)

    /// Whether the server refused the peer by policy (1008, 1009, 1013) rather than the
    /// session ending: such closes are logged with the peer's address and the reason.
    public var isPolicyClose: Bool {
        self == .policyViolation || self == .messageTooBig || self == .tryAgainLater
    }

    /// Whether a peer may send this code in a close frame (§7.4.1, §7.4.2, and the IANA
    /// registry's 1012–1014): 1005, 1006 and 1015 are reserved for reporting and never
    /// appear on the wire; 0–999, unassigned 1xxx and 5000+ are invalid.
    public var isValidOnTheWire: Bool {
        switch rawValue {
        case 1000...1003, 1007...1014, 3000...4999: return true
        default: return false
        }
    }

    public var description: String { String(rawValue) }
}
