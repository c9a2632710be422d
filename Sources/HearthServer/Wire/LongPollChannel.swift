import Dispatch
import HearthAuth
import HearthHTTP
import HearthWire
import Logging
import Synchronization

/// Named bounds of the long-poll transport (`/.lp`, docs/protocol/wire.md §8); each has a
/// test that crosses it (LongPollLiveTests).
public struct LongPollLimits: Sendable, Equatable {
    /// Bytes one session may hold for its client: messages waiting for the next poll, and
    /// the segments of client messages not whole yet (or the chunks of a message announced
    /// in chunks). Past it the session ends as if the client had gone (its onDisconnect
    /// operations run): a client that stopped polling, or one that never finishes a
    /// message. The first message waiting counts too: a larger one reaches the client only
    /// when a poll is held for it (it then goes straight into that poll's connection,
    /// which `HTTPLimits.maxUnsentBytes` bounds); otherwise the session ends. Messages
    /// waiting also count against the server-wide `HTTPLimits.maxUnsentBytes`, as a
    /// WebSocket's or an SSE stream's unsent output does: a session behind while that is
    /// passed ends too.
    static let defaultMaxPendingBytes = 8 * 1024 * 1024
    /// Long-poll sessions open at once on this server; past it a new one is refused with
    /// 503 (the SDK's script fails to load; it retries with back-off).
    static let defaultMaxSessions = 10_000
    /// Long-poll sessions open at once from one client address (the forwarded client's
    /// behind `trustedProxies`); past it a new one from that address is refused with 429
    /// (the SDK's script fails to load; it retries with back-off), while other addresses
    /// still get sessions: one client cannot take the server's whole `maxSessions`. A
    /// browser tab holds one session; a fiftieth of `maxSessions` leaves room for an office
    /// behind one NAT.
    static let defaultMaxSessionsPerAddress = 200
    /// How long a poll is held when there is nothing to send, before it is answered empty:
    /// under the SDK's 25 s, after which it would replace the poll itself.
    static let defaultPollHoldSeconds = 20.0
    /// A session with no poll held and none received for this long has lost its client
    /// (closed without the disconnect frame, or its network went): it ends and its
    /// onDisconnect operations run. The SDK keeps a poll open at all times and renews it
    /// at least every 25 s.
    static let defaultSessionIdleSeconds = 60.0

    public var maxPendingBytes = defaultMaxPendingBytes
    public var maxSessions = defaultMaxSessions
    public var maxSessionsPerAddress = defaultMaxSessionsPerAddress
    public var pollHoldSeconds = defaultPollHoldSeconds
    public var sessionIdleSeconds = defaultSessionIdleSeconds

    public init() {}
}

/// One long-poll client's transport (docs/protocol/wire.md §8): the `WireChannel` of its
/// `WireSession`. Messages for the client wait in a bounded outbox until a poll takes them;
/// a poll with nothing to take is held (`pollHoldSeconds`); the client's messages arrive as
/// segments on its polls and go to the session whole, in order.
final class LongPollChannel: WireChannel {
    let id: String
    let password: String
    let callback: String
    /// The client's address (the forwarded client's behind a trusted proxy), which its
    /// registry counts sessions under.
    let address: String
    private let limits: LongPollLimits
    private let registry: LongPollRegistry
    /// The session's own serial queue: the timers run there.
    private let queue: DispatchQueue
    private let logger: Logger
    private let state: Mutex<State>

    private struct State {
        var session: WireSession?
        var outbox: [[UInt8]] = []
        var outboxBytes = 0
        /// What of `outboxBytes` is counted in the server's unsent bytes (messages that
        /// waited for a poll; one that went straight to a held poll is not).
        var counted = 0
        var nextResponse = 0
        /// The poll being held, and what its answer starts with (the start command).
        var held: HTTPResponder?
        var heldPrefix: [UInt8] = []
        var holdGeneration = 0
        var segments: LongPollSegments
        var lastHeard: ContinuousClock.Instant
        /// The session closed the transport: the client gets the close command next.
        var closing = false
        var finished = false
    }

    init(session: WireSession, id: String, password: String, callback: String, address: String, limits: LongPollLimits,
         registry: LongPollRegistry, logger: Logger) {
        (self.id, self.password, self.callback, self.address) = (id, password, callback, address)
        self.limits = limits
        self.registry = registry
        self.queue = session.queue
        self.logger = logger
        self.state = Mutex(State(session: session, segments: LongPollSegments(maxHeldBytes: limits.maxPendingBytes),
                                 lastHeard: .now))
    }

    static let scriptType = "application/javascript; charset=utf-8"

    static func script(_ body: [UInt8]) -> HTTPResponse {
        var headers = HTTPHeaders()
        headers.add("Content-Type", scriptType)
        headers.add("Cache-Control", "no-cache, no-store")
        return HTTPResponse(status: 200, headers: headers, body: body)
    }

    /// Whether `password` is this session's (constant time).
    func admits(password candidate: Substring) -> Bool {
        ConstantTime.equals(candidate, password)
    }

    // MARK: Requests

    /// The start request: answered with the start command and the session's first
    /// messages (the handshake) as soon as there are any.
    func start(_ responder: HTTPResponder) {
        let session = state.withLock { state -> WireSession? in
            state.held = responder
            state.heldPrefix = LongPollScript.start(callback: callback, id: id, password: password)
            return state.session
        }
        armIdleTimer(after: limits.sessionIdleSeconds)
        session?.open(self)
    }

    /// A poll (`id`, `pw`, `ser`, maybe segments): its segments go to the session; it is
    /// answered with what waits, or held until something does.
    func poll(_ segments: [LongPollSegments.Segment], responder: HTTPResponder) {
        var released: HTTPResponder?
        var answer: (HTTPResponder, [UInt8])?
        var messages: [String] = []
        var overflow = false
        let session: WireSession? = state.withLock { state in
            guard !state.finished else {
                answer = (responder, LongPollScript.close(callback: callback, after: nil))
                return nil
            }
            state.lastHeard = .now
            do {
                for segment in segments { messages += try state.segments.take(segment) }
            } catch {
                overflow = true
            }
            released = state.held
            state.held = nil
            if let old = released, !state.heldPrefix.isEmpty {
                // The start is still waiting for the handshake: it keeps that place.
                state.held = old
                released = nil
            }
            if state.held == nil {
                if let body = self.takeOutbox(&state) {
                    answer = (responder, body)
                } else {
                    state.held = responder
                    state.holdGeneration += 1
                    let generation = state.holdGeneration
                    queue.asyncAfter(deadline: .now() + limits.pollHoldSeconds) { self.holdExpired(generation) }
                }
            } else {
                answer = (responder, [])
            }
            return state.session
        }
        released?.respond(Self.script([]))
        if let (responder, body) = answer { responder.respond(Self.script(body)) }
        if state.withLock({ $0.finished }) { registry.remove(id: id) }
        if overflow {
            logger.notice("long poll: ended session \(id.prefix(8))…: over \(limits.maxPendingBytes) bytes of unfinished messages")
            return end()
        }
        // All decoded before any is taken: a poll with one message that is not base64 ends
        // the session with none of its messages run.
        var decoded: [WebSocketMessage] = []
        decoded.reserveCapacity(messages.count)
        for text in messages {
            guard let bytes = Self.decode(text) else {
                logger.notice("long poll: ended session \(id.prefix(8))…: a message that is not base64")
                return end()
            }
            decoded.append(.text(bytes))
        }
        session?.received(decoded)
    }

    /// The client left (`disconn`, from its disconnect frame's page going away).
    func disconnect() {
        end()
    }

    /// The SDK's base64 (web-safe alphabet, `.` as padding) of a message's UTF-8.
    static func decode(_ text: String) -> [UInt8]? {
        let padded = String(text.map { $0 == "." ? "=" : $0 })
        return Base64.decode(padded, alphabet: .url, padding: .optional)
    }

    // MARK: WireChannel

    func send(message: [UInt8]) {
        var answer: (HTTPResponder, [UInt8])?
        let overflow = state.withLock { state -> Overflow? in
            guard !state.finished, !state.closing else { return nil }
            if let held = state.held {
                // A poll waits (so nothing else does): the message goes out on it now.
                state.outbox.append(message)
                state.outboxBytes += message.count
                answer = self.takeOutbox(&state).map { (held, $0) }
                state.held = nil
                return nil
            }
            // The bounds hold for the first message too: a client that never polls again
            // must not pin a large value for the idle timeout.
            if state.outboxBytes + message.count > limits.maxPendingBytes { return .session }
            guard registry.unsent.hold(message.count, alreadyHeld: state.outboxBytes) else { return .server }
            state.outbox.append(message)
            state.outboxBytes += message.count
            state.counted += message.count
            return nil
        }
        if let (responder, body) = answer { responder.respond(Self.script(body)) }
        switch overflow {
        case .session:
            logger.notice("long poll: ended session \(id.prefix(8))…: over \(limits.maxPendingBytes) bytes waiting for a poll")
            end()
        case .server:
            logger.notice("long poll: ended session \(id.prefix(8))…: behind while the server holds \(registry.unsent.limit) unsent bytes")
            end()
        case nil:
            break
        }
    }

    /// Which bound a message waiting for a poll would pass.
    private enum Overflow {
        /// This session's `maxPendingBytes`.
        case session
        /// The server's unsent bytes (`HTTPLimits.maxUnsentBytes`).
        case server
    }

    /// The session ended the transport: what waits goes out with the close command, on
    /// the poll held now or the next one.
    func close(_ code: WebSocketCloseCode, reason: String) {
        var answer: (HTTPResponder, [UInt8])?
        state.withLock { state in
            guard !state.finished, !state.closing else { return }
            state.closing = true
            if let held = state.held {
                state.held = nil
                answer = (held, self.takeOutbox(&state) ?? [])
                finish(&state)
            }
        }
        if answer != nil { registry.remove(id: id) }
        if let (responder, body) = answer { responder.respond(Self.script(body)) }
    }

    /// Bytes the session holds for a message announced in chunks (docs/protocol/wire.md
    /// §2.1; the JS SDK never chunks on a long poll, but a client may): past
    /// `maxPendingBytes` the session ends, as it does for segments.
    func holding(_ bytes: Int) {
        guard bytes > limits.maxPendingBytes else { return }
        logger.notice("long poll: ended session \(id.prefix(8))…: over \(limits.maxPendingBytes) bytes of a chunked message")
        end()
    }

    var pausesReading: Bool { false }

    /// A long poll cannot stop the client's next request from arriving: past
    /// `maxPendingBytes` of requests not answered yet, the session ends, as for a message
    /// held in parts.
    func waiting(_ bytes: Int, pause: Bool) {
        guard bytes > limits.maxPendingBytes else { return }
        logger.notice("long poll: ended session \(id.prefix(8))…: over \(limits.maxPendingBytes) bytes of requests not answered yet")
        end()
    }

    // MARK: Internals

    /// The script for what waits (the held prefix, the messages as the next response, the
    /// close command when closing), emptying the outbox; nil when there is nothing.
    private func takeOutbox(_ state: inout State) -> [UInt8]? {
        guard !state.outbox.isEmpty || state.closing else { return nil }
        var body = state.heldPrefix
        state.heldPrefix = []
        var last: Int?
        if !state.outbox.isEmpty {
            body += LongPollScript.data(callback: callback, number: state.nextResponse, messages: state.outbox)
            last = state.nextResponse
            state.nextResponse += 1
            state.outbox = []
            state.outboxBytes = 0
            registry.unsent.release(state.counted)
            state.counted = 0
        }
        if state.closing {
            body += LongPollScript.close(callback: callback, after: last)
            finish(&state)
        }
        state.lastHeard = .now
        return body
    }

    private func finish(_ state: inout State) {
        state.finished = true
        state.session = nil
        state.outbox = []
        state.outboxBytes = 0
        registry.unsent.release(state.counted)
        state.counted = 0
    }

    /// Ends the session from this side (the client left, timed out, or broke a bound):
    /// the session ends (its onDisconnect operations run); a held poll gets the close.
    private func end() {
        var held: HTTPResponder?
        let session = state.withLock { state -> WireSession? in
            guard !state.finished else { return nil }
            let session = state.session
            held = state.held
            state.held = nil
            finish(&state)
            return session
        }
        registry.remove(id: id)
        held?.respond(Self.script(LongPollScript.close(callback: callback, after: nil)))
        session?.closed(code: nil)
    }

    private func holdExpired(_ generation: Int) {
        let held = state.withLock { state -> HTTPResponder? in
            guard state.holdGeneration == generation, let held = state.held, state.heldPrefix.isEmpty else { return nil }
            state.held = nil
            state.lastHeard = .now
            return held
        }
        held?.respond(Self.script([]))
    }

    private func armIdleTimer(after seconds: Double) {
        queue.asyncAfter(deadline: .now() + seconds) { self.checkIdle() }
    }

    private func checkIdle() {
        let idle = Duration.milliseconds(Int64(limits.sessionIdleSeconds * 1000))
        let remaining = state.withLock { state -> Duration? in
            guard !state.finished else { return nil }
            if state.held != nil { return idle }
            let quiet = ContinuousClock.now - state.lastHeard
            return quiet >= idle ? .zero : idle - quiet
        }
        guard let remaining else { return }
        if remaining == .zero {
            logger.info("long poll: session \(id.prefix(8))… ended after \(limits.sessionIdleSeconds) s without a poll")
            return end()
        }
        let (seconds, attoseconds) = remaining.components
        armIdleTimer(after: Double(seconds) + Double(attoseconds) / 1e18)
    }
}

/// The open long-poll sessions by id, at most `LongPollLimits.maxSessions`, and at most
/// `LongPollLimits.maxSessionsPerAddress` of one client address.
final class LongPollRegistry: Sendable {
    let limits: LongPollLimits
    /// The server's unsent response bytes (`HTTPLimits.maxUnsentBytes`), shared with its
    /// HTTP server: messages waiting in a session for a poll are counted there.
    let unsent: UnsentBytes
    private let open = Mutex<Open>(Open())

    private struct Open {
        var byID: [String: LongPollChannel] = [:]
        var perAddress: [String: Int] = [:]
    }

    /// Why a session was not added.
    enum Refusal: Error {
        /// `maxSessions` are open.
        case serverFull
        /// `maxSessionsPerAddress` are open from the session's address.
        case addressFull
    }

    init(limits: LongPollLimits, unsent: UnsentBytes) {
        self.limits = limits
        self.unsent = unsent
    }

    /// Adds `channel`, counted under its address.
    func add(_ channel: LongPollChannel) throws(Refusal) {
        try open.withLock { open throws(Refusal) in
            let mine = open.perAddress[channel.address, default: 0]
            guard mine < limits.maxSessionsPerAddress else { throw .addressFull }
            guard open.byID.count < limits.maxSessions else { throw .serverFull }
            open.byID[channel.id] = channel
            open.perAddress[channel.address] = mine + 1
        }
    }

    func find(id: Substring) -> LongPollChannel? {
        open.withLock { $0.byID[String(id)] }
    }

    func remove(id: String) {
        open.withLock { open in
            guard let channel = open.byID.removeValue(forKey: id) else { return }
            let left = open.perAddress[channel.address, default: 1] - 1
            open.perAddress[channel.address] = left > 0 ? left : nil
        }
    }

    var count: Int { open.withLock { $0.byID.count } }

    /// Ends every open session (the server is stopping): a held poll gets the close
    /// command at once rather than holding up the shutdown, and each session ends as if
    /// its client had left (its onDisconnect operations run), as a WebSocket's does when
    /// its connection closes.
    func endAll() {
        for channel in open.withLock({ Array($0.byID.values) }) { channel.disconnect() }
    }
}
