/// The timeout side of one WebSocket session as a pure state machine over an injected
/// clock, like `ConnectionLifecycle`: the session reports what happened, a periodic tick
/// asks `check(now:)` what to do. (Writes to a peer that does not read are timed by the
/// connection's `ConnectionLifecycle`, as for any response.)
///
/// - `open`: after `pingInterval` without a frame from the peer, ping it (RFC 6455
///   §5.5.2); after a ping, `pongTimeout` without any frame means the peer is gone. Silence
///   alone never closes a session: Firebase clients that only receive send nothing for
///   minutes, and their libraries answer pings by themselves (docs/protocol/wire.md §6.4).
/// - `closing`: our close frame is queued. No clock runs here: once the frame is written the
///   connection half-closes and drains the peer's answer for at most
///   `HTTPLimits.lingerTimeout` (§7.1.1), as after any final HTTP response.
/// - An incomplete message (`holding`) that has not grown for `partialMessageTimeout` is
///   dropped with the session, whatever pings and pongs say about the peer.
struct WebSocketLifecycle: Equatable {
    enum Phase: Equatable {
        case open(lastHeard: Nanoseconds, pingSent: Nanoseconds?)
        case closing(since: Nanoseconds)
        case closed
    }

    enum Decision: Equatable {
        case none
        /// Send a ping frame, then report `pingSent`.
        case sendPing
        /// Close the TCP connection (the peer is gone, or did not finish the close handshake).
        case close
        /// A message stayed incomplete for `partialMessageTimeout` without growing: close
        /// the session (1008), dropping its bytes.
        case dropPartialMessage
    }

    private(set) var phase: Phase
    let pingInterval: Nanoseconds
    let pongTimeout: Nanoseconds
    let partialMessageTimeout: Nanoseconds
    /// Bytes held for an incomplete message (0: none), and when they last grew.
    private(set) var partialBytes = 0
    private(set) var partialGrew: Nanoseconds = 0

    init(limits: WebSocketLimits, now: Nanoseconds) {
        phase = .open(lastHeard: now, pingSent: nil)
        pingInterval = ConnectionLifecycle.nanoseconds(limits.pingInterval)
        pongTimeout = ConnectionLifecycle.nanoseconds(limits.pongTimeout)
        partialMessageTimeout = ConnectionLifecycle.nanoseconds(limits.partialMessageTimeout)
    }

    /// The session now holds `bytes` for a message not complete yet (0 once it is, or was
    /// dropped). Only growth restarts the clock: a ping between fragments, or bytes moving
    /// from the frame parser to the application, do not.
    mutating func holding(_ bytes: Int, now: Nanoseconds) {
        if bytes > partialBytes { partialGrew = now }
        partialBytes = bytes
    }

    /// A frame (any frame: data, ping, pong) arrived from the peer.
    mutating func heard(now: Nanoseconds) {
        if case .open = phase { phase = .open(lastHeard: now, pingSent: nil) }
    }

    /// The connection is not reading (its application is behind): neither the peer's
    /// silence nor a message that stopped growing is the peer's doing, so both clocks
    /// start again.
    mutating func paused(now: Nanoseconds) {
        heard(now: now)
        if partialBytes > 0 { partialGrew = now }
    }

    mutating func pingSent(now: Nanoseconds) {
        if case .open(let lastHeard, nil) = phase { phase = .open(lastHeard: lastHeard, pingSent: now) }
    }

    /// Our close frame is queued (we started the closing handshake, or answered the peer's).
    mutating func closeSent(now: Nanoseconds) {
        if case .open = phase { phase = .closing(since: now) }
    }

    mutating func closed() {
        phase = .closed
    }

    var isOpen: Bool {
        if case .open = phase { return true }
        return false
    }

    /// The instant something is due, or nil when no clock runs.
    var deadline: Nanoseconds? {
        let liveness: Nanoseconds
        switch phase {
        case .open(let lastHeard, nil): liveness = lastHeard &+ pingInterval
        case .open(_, let ping?): liveness = ping &+ pongTimeout
        case .closing, .closed: return nil
        }
        return partialBytes > 0 ? min(liveness, partialGrew &+ partialMessageTimeout) : liveness
    }

    func check(now: Nanoseconds) -> Decision {
        guard let deadline, now >= deadline else { return .none }
        if partialBytes > 0 && now >= partialGrew &+ partialMessageTimeout { return .dropPartialMessage }
        switch phase {
        case .open(_, nil): return .sendPing
        case .open(_, _?): return .close
        case .closing, .closed: return .none
        }
    }
}
