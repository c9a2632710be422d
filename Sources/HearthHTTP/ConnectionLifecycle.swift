/// Monotonic time in nanoseconds. The live server reads `DispatchTime.now()`; tests pass
/// any numbers they like (timeouts are decisions over an injected clock).
typealias Nanoseconds = UInt64

/// The timeout side of one connection as a pure state machine: the connection reports what
/// happened, a periodic tick asks `check(now:)` what to do. No timers, no sockets here.
///
/// Which clock runs depends on the phase (RFC 9112 §9.5, §9.8 leave the values to us):
/// - `readingHead`: from accept or from the first byte of a request until its header
///   section is complete; over `headerReadTimeout` → 408 and close (slowloris defence).
/// - `readingBody`: between two reads of the body; over `bodyReadTimeout` → 408 and close.
///   Also a rate floor: `bodyReadTimeout + n / minBodyBytesPerSecond` seconds after the
///   body began it must have delivered `n` bytes, else 408 and close (a byte every few
///   seconds never trips the idle clock, but it trips this one).
/// - `handling`: the handler owns the time; no timeout here.
/// - `writing`: between two writes of a response; over `writeTimeout` → close (a peer
///   that does not read must not pin memory forever).
/// - `idle`: between keep-alive requests; over `idleTimeout` → close silently.
/// - `lingering`: after the final response, draining the peer; over the linger time → close.
struct ConnectionLifecycle: Equatable {
    enum Phase: Equatable {
        case readingHead(since: Nanoseconds)
        case readingBody(lastProgress: Nanoseconds)
        case handling
        case writing(lastProgress: Nanoseconds)
        case idle(since: Nanoseconds)
        case lingering(since: Nanoseconds)
        /// An open-ended body with nothing waiting to be written: no clock runs (the
        /// application sends its own keep-alives).
        case streaming
        case closed
    }

    enum Decision: Equatable {
        case none
        /// Answer 408 Request Timeout, then close (RFC 9110 §15.5.9).
        case respondTimeoutAndClose
        /// Close without a response.
        case close
    }

    private(set) var phase: Phase
    let headerTimeout: Nanoseconds
    let bodyTimeout: Nanoseconds
    let writeTimeout: Nanoseconds
    let idleTimeout: Nanoseconds
    let lingerTimeout: Nanoseconds
    /// `HTTPLimits.minBodyBytesPerSecond`; 0 turns the rate floor off.
    let minBodyBytesPerSecond: Int
    /// When the body being read began, and how many of its bytes have arrived.
    private(set) var bodyStarted: Nanoseconds = 0
    private(set) var bodyBytes = 0

    /// A new connection starts its header clock at accept: a client that connects and
    /// sends nothing is treated like one that sends its head too slowly.
    init(limits: HTTPLimits, now: Nanoseconds) {
        phase = .readingHead(since: now)
        headerTimeout = Self.nanoseconds(limits.headerReadTimeout)
        bodyTimeout = Self.nanoseconds(limits.bodyReadTimeout)
        writeTimeout = Self.nanoseconds(limits.writeTimeout)
        idleTimeout = Self.nanoseconds(limits.idleTimeout)
        lingerTimeout = Self.nanoseconds(HTTPLimits.lingerTimeout)
        minBodyBytesPerSecond = max(0, limits.minBodyBytesPerSecond)
    }

    /// The parser consumed what arrived and is now in `parserPhase`; `bodyBytes` is how
    /// much of the current request's body has arrived (`HTTPRequestParser.bodyProgress`).
    mutating func inputParsed(_ parserPhase: HTTPRequestParser.Phase, now: Nanoseconds, bodyBytes: Int = 0) {
        switch (phase, parserPhase) {
        case (.idle, .head):
            phase = .readingHead(since: now)
        case (.idle, .body), (.readingHead, .body):
            bodyStarted = now
            self.bodyBytes = bodyBytes
            phase = .readingBody(lastProgress: now)
        case (.readingBody, .body):
            self.bodyBytes = bodyBytes
            phase = .readingBody(lastProgress: now)
        default:
            break
        }
    }

    /// A complete request went to the handler.
    mutating func requestDispatched() {
        if phase != .closed { phase = .handling }
    }

    /// A response was queued for writing.
    mutating func responseQueued(now: Nanoseconds) {
        if phase != .closed { phase = .writing(lastProgress: now) }
    }

    /// Some bytes of the response left.
    mutating func wrote(now: Nanoseconds) {
        if case .writing = phase { phase = .writing(lastProgress: now) }
    }

    /// Everything queued was written. After a response, the connection is idle; after an
    /// interim `100 Continue` it keeps reading the body; a stream waits for its next event.
    mutating func outputDrained(now: Nanoseconds) {
        if case .writing = phase { phase = isStream ? .streaming : .idle(since: now) }
    }

    /// True once the connection carries an open-ended body.
    private(set) var isStream = false

    /// The handler answered with an open-ended body; its head is queued.
    mutating func streamStarted(now: Nanoseconds) {
        guard phase != .closed else { return }
        isStream = true
        phase = .writing(lastProgress: now)
    }

    /// Stream bytes were queued after the output had drained: the write clock starts, so a
    /// peer that stops reading is closed after `writeTimeout` even below the buffer bound.
    mutating func streamQueued(now: Nanoseconds) {
        if phase == .streaming { phase = .writing(lastProgress: now) }
    }

    /// The final response was written; the connection drains the peer before closing.
    mutating func lingerStarted(now: Nanoseconds) {
        if phase != .closed { phase = .lingering(since: now) }
    }

    mutating func closed() {
        phase = .closed
    }

    /// Whether a graceful shutdown may close the connection now: nothing of a request has
    /// arrived and nothing is owed (RFC 9112 §9.6, closing an idle connection is always allowed).
    func isIdle(parserPhase: HTTPRequestParser.Phase) -> Bool {
        switch phase {
        case .idle: return parserPhase == .betweenRequests
        case .readingHead: return parserPhase == .betweenRequests
        default: return false
        }
    }

    /// The instant the current phase times out, or nil when no clock runs.
    var deadline: Nanoseconds? {
        switch phase {
        case .readingHead(let since): return since &+ headerTimeout
        case .readingBody(let last):
            guard minBodyBytesPerSecond > 0 else { return last &+ bodyTimeout }
            // Whole seconds' worth first, so huge bodies cannot overflow the product.
            let earned = UInt64(bodyBytes / minBodyBytesPerSecond) &* 1_000_000_000
                &+ UInt64(bodyBytes % minBodyBytesPerSecond) &* 1_000_000_000 / UInt64(minBodyBytesPerSecond)
            return min(last &+ bodyTimeout, bodyStarted &+ bodyTimeout &+ earned)
        case .writing(let last): return last &+ writeTimeout
        case .idle(let since): return since &+ idleTimeout
        case .lingering(let since): return since &+ lingerTimeout
        case .handling, .streaming, .closed: return nil
        }
    }

    /// What to do at `now`.
    func check(now: Nanoseconds) -> Decision {
        guard let deadline, now >= deadline else { return .none }
        switch phase {
        case .readingHead, .readingBody: return .respondTimeoutAndClose
        case .writing, .idle, .lingering: return .close
        case .handling, .streaming, .closed: return .none
        }
    }

    static func nanoseconds(_ seconds: Double) -> Nanoseconds {
        guard seconds > 0 else { return 0 }
        let limit = Double(UInt64.max / 4)
        return Nanoseconds(min(seconds * 1e9, limit))
    }
}
