import HearthHTTP
import HearthWire

/// Where one wire-protocol session's messages go and what ends it: the seam between
/// `WireSession` (the protocol) and a transport. A WebSocket (`/.ws`, `WebSocketSession`)
/// is one; a long poll (`/.lp`, `LongPollChannel`) is the other (docs/protocol/wire.md §8).
///
/// Usable from any thread; sends from one thread keep their order.
protocol WireChannel: AnyObject, Sendable {
    /// Sends one whole message (a JSON envelope, docs/protocol/wire.md §2.2); the transport
    /// frames it.
    func send(message: [UInt8])
    /// Bytes the session holds for a message it has not got whole yet, counted against
    /// the transport's bounds on incomplete input (0 once whole).
    func holding(_ bytes: Int)
    /// Bytes of whole requests the session holds, not answered yet: counted against the
    /// transport's bounds like `holding`'s. While `pause`, a transport that can stops
    /// reading from the client until a later call says otherwise.
    func waiting(_ bytes: Int, pause: Bool)
    /// Whether `waiting`'s pause holds the client back (a WebSocket stops reading); a long
    /// poll cannot.
    var pausesReading: Bool { get }
    /// Ends the transport: a WebSocket closes with `code`; a long poll tells the client
    /// to close. The session's `closed` follows.
    func close(_ code: WebSocketCloseCode, reason: String)
}

extension WebSocketSession: WireChannel {
    var pausesReading: Bool { true }

    /// One text frame, or the SDKs' chunking for a long message (docs/protocol/wire.md
    /// §2.1), its frames sent as one unit so a slow reader's bound never cuts a message.
    func send(message: [UInt8]) {
        send(texts: WireOutbound.frames(message))
    }
}
