/// Every bound a WebSocket session enforces (each has a test that crosses
/// it). Times are in seconds.
public struct WebSocketLimits: Sendable, Equatable {
    /// Largest message, all of its fragments together. Over → close 1009, decided from the
    /// frame header before the payload is buffered. The default matches
    /// `HTTPLimits.defaultMaxBodyBytes`: the most one REST write may carry.
    public var maxMessageBytes: Int = WebSocketLimits.defaultMaxMessageBytes
    /// Bytes that may wait, not started, behind the message going out to a peer that
    /// does not read. A message that would pass it ends the session instead (like a
    /// stream's `HTTPStreamOptions.maxBufferedBytes`): what has not started going out is
    /// dropped, a close frame 1008 follows, and the connection closes once it is written
    /// or after `HTTPLimits.writeTimeout`. The message going out is not counted, and one
    /// right behind it is taken whatever its size, so a message larger than the bound
    /// reaches a peer that reads (`WebSocketSession.send(texts:)` keeps the frames of one
    /// message together).
    public var maxBufferedBytes: Int = WebSocketLimits.defaultMaxBufferedBytes
    /// After this long without a frame from the peer, the server sends a ping (§5.5.2).
    /// Liveness is never judged by the peer's silence alone: Firebase clients that only
    /// receive send nothing for minutes (docs/protocol/wire.md §6.4).
    public var pingInterval: Double = WebSocketLimits.defaultPingInterval
    /// After a ping, how long the peer has to send anything (its pong) before the
    /// connection is dropped as dead.
    public var pongTimeout: Double = WebSocketLimits.defaultPongTimeout
    /// How long a message may stay incomplete (a fragment without FIN, a frame whose payload
    /// has not all come, an application's partly joined message) without growing. Over →
    /// close 1008: its bytes are released rather than held until the peer is judged dead.
    /// Pings and pongs in between do not count as progress.
    public var partialMessageTimeout: Double = WebSocketLimits.defaultPartialMessageTimeout

    public static let defaultMaxMessageBytes = 16 * 1024 * 1024
    public static let defaultMaxBufferedBytes = 1024 * 1024
    public static let defaultPingInterval: Double = 30
    public static let defaultPongTimeout: Double = 30
    public static let defaultPartialMessageTimeout: Double = 15
    /// Longest control frame payload (§5.5). Not configurable: the RFC fixes it.
    public static let maxControlPayloadBytes = 125

    public init() {}
}
