/// What the hub needs to know about a subscriber's right to read, without knowing rules
/// or tokens (docs/design.md §2: streams know paths and changes only). The server
/// implements it.
public protocol StreamGate: Sendable {
    /// When the credential behind the stream stops being valid (ms since the epoch), or
    /// nil for never. Past it the stream gets `auth_revoked` and is closed, and no event
    /// is delivered to it.
    var expiresAt: Int64? { get }
}

/// The server's answer when it re-decides a subscriber's access.
public enum StreamVerdict: Sendable, Equatable {
    case keep
    /// Read access is gone (rules, data): `cancel`, then close.
    case cancel
    /// The credential expired or was revoked: `auth_revoked`, then close.
    case authRevoked
    /// The server cannot vouch for what the stream was sent (its node missed changes):
    /// close without a last event, so the client connects again and starts over (an SSE
    /// client resumes with `Last-Event-ID`; a wire-protocol client listens again).
    case reconnect

    /// The SSE bytes that end a stream with this verdict (`cancel`, `auth_revoked`).
    public var finalBytes: [UInt8] {
        switch self {
        case .keep, .reconnect: return []
        case .cancel: return StreamFrames.cancel
        case .authRevoked: return StreamFrames.authRevoked
        }
    }
}

/// Where a subscriber's events go; its transport encodes them (SSE frames for an HTTP
/// stream, wire pushes for a listen). Called on the hub's fan-out queue, in commit order;
/// must not block.
public protocol StreamEventSink: Sendable {
    /// One event, in sync with change `seq`. `event.path` is relative to the location.
    func deliver(_ event: StreamEvent, seq: Int64)
    /// The hub ended the subscription (`cancel`: access lost; `authRevoked`: the
    /// credential expired or was revoked; `reconnect`: the server missed changes and the
    /// client must start over). Nothing is delivered after it.
    func ended(_ verdict: StreamVerdict)
    /// The hub's keep-alive tick (every `keepAliveInterval`); a transport that needs no
    /// keep-alive of its own ignores it.
    func keepAlive()
    /// Makes events that can be megabytes ready to send, off the fan-out queue, where
    /// encoding them held every other push of the namespace: a stream's first events (on
    /// the queue that starts it) and a query stream's new result (on the reader that read
    /// it). Returns what hands them to the transport, run on the fan-out queue in the
    /// stream's order. The default encodes nothing ahead: it delivers them there.
    func prepareEvents(_ events: [(event: StreamEvent, seq: Int64)]) -> PreparedEvents
}

/// A stream's events made ready off the fan-out queue: `send` runs once on it.
public struct PreparedEvents: Sendable {
    public let send: @Sendable () -> Void

    public init(send: @escaping @Sendable () -> Void) { self.send = send }
}

extension StreamEventSink {
    public func keepAlive() {}

    public func prepareEvents(_ events: [(event: StreamEvent, seq: Int64)]) -> PreparedEvents {
        PreparedEvents { for (event, seq) in events { self.deliver(event, seq: seq) } }
    }
}

/// Why a stream could not be opened.
public enum StreamLimitError: Error, Sendable, Equatable {
    /// `StreamOptions.maxStreams` are open.
    case tooManyStreams
    /// `StreamOptions.maxStreamsPerAddress` are open from this client address.
    case tooManyStreamsFromAddress
}
