import Dispatch
import HearthHTTP
import HearthJSON
import HearthRules
import HearthStreams
import HearthWire
import Logging
import Synchronization

/// One client of the Firebase wire protocol (docs/protocol/wire.md) on a
/// WebSocket: the second adapter over the database core, beside REST + SSE.
///
/// Requests are handled one at a time in arrival order (docs/protocol/wire.md §3.1): the
/// next starts when the previous one answered. Every answer is sent through
/// `StreamHub.afterQueuedEvents`, so the pushes of writes committed before it (including
/// this client's own write, and a listen's first data) reach the client first (§4.2, §4.3).
///
/// `@unchecked Sendable`: all mutable state is confined to `queue` (serial).
final class WireSession: WebSocketHandler, @unchecked Sendable {
    let context: WireContext
    private let host: String
    let address: String
    let sessionID: WireSessionID
    /// The connection's serial I/O queue (a queue of its own when there is none, in unit
    /// tests): a message is handled where it was read and an answer is written from the
    /// block that makes it, so a `p` costs the hops of a REST write (to the writer and
    /// back), and a session has no queue object of its own.
    let queue: DispatchQueue

    // Confined to `queue`. Members the session's extensions use (WireSession+Listens.swift,
    // WireSession+Writes.swift) are internal rather than private; they are still touched
    // only on `queue`.
    var session: (any WireChannel)?
    /// The same session for the hub's fan-out queue, which sends pushes directly so that
    /// they keep their order with the answers sent from there.
    private let sessionForPushes = Mutex<(any WireChannel)?>(nil)
    private var assembler: WireFrameAssembler
    /// What `assembler` holds as the connection last heard (`WebSocketSession.holding`).
    private var reportedHeld = 0
    /// Requests waiting behind the running one, as they came (decoded again when their
    /// turn comes: as parsed trees they would hold several times their size).
    private var inbox: [[UInt8]] = []
    private var inboxBytes = 0
    /// What the connection last heard of the requests held (`WireChannel.waiting`).
    private var reportedWaiting = (bytes: 0, pause: false)
    /// The running request's size, and its recording while the profiler records.
    private var requestBytes = 0
    private var profiling: WireProfiling?
    var busy = false
    var closed = false
    var credential = Authenticator.Credential(caller: .unauthenticated)
    /// The times of `credential` as the gates of this session's listens see them (made at
    /// the first listen under an identity; renewed by a same-identity `auth`).
    var credentialTimes: CredentialTimes?
    /// In opening order. An array, not a dictionary: most sessions hold one or a few
    /// listens, and a one-entry dictionary costs ~200 bytes per idle connection; lookups
    /// scan at most `WireSessionLimits.maxListens`.
    var listens: [OpenListen] = []
    var onDisconnect: [OnDisconnectLedger.Entry] = []
    /// Their stored bytes, taken from `WireSessionRegistry.onDisconnectBudget`.
    var onDisconnectBytes = 0
    var nextPosition: Int64 = 0
    /// Whether any onDisconnect record was ever written for this session (else its end
    /// has none to remove).
    var registeredOnDisconnect = false
    var authFailures = 0
    private var badMessages = 0

    struct ListenKey: Hashable {
        let path: DataPath
        let query: JSONValue
    }

    struct OpenListen {
        let key: ListenKey
        let listening: Listening
        let tag: Int64?
    }

    func listenIndex(_ key: ListenKey) -> Int? {
        listens.firstIndex { $0.key == key }
    }

    /// Why this session is refused at once (an unknown namespace): it gets the protocol's
    /// shutdown (`s`, the SDK does not reconnect) instead of the handshake.
    private let refusal: String?

    /// Whether the upgrade came straight from this machine (`LocalOnlyCredentials`): only
    /// then is the emulator's `owner` token honoured.
    let directLocal: Bool
    /// The lease this node held when the session opened (nil with one node): its writes
    /// commit only while that lease is live in the database (`WriteFence`), so a write that
    /// arrives after the node lost it (paused, cut off) is refused, never committed behind
    /// the back of the node that ran this session's onDisconnect operations.
    let leaseEpoch: String?

    init(context: WireContext, host: String, address: String, sessionID: WireSessionID, refusal: String? = nil,
         connectionQueue: DispatchQueue? = nil, directLocal: Bool = false) {
        self.directLocal = directLocal
        self.leaseEpoch = context.onDisconnect.leaseEpoch
        self.queue = connectionQueue ?? DispatchQueue(label: "hearth.wire.session")
        self.refusal = refusal
        self.context = context
        self.host = host
        self.address = address
        self.sessionID = sessionID
        self.assembler = WireFrameAssembler(limits: context.limits.frames)
    }

    // MARK: WebSocketHandler

    func opened(_ session: WebSocketSession) {
        open(session)
    }

    /// The transport is open and `channel` may send: the handshake goes out (or the
    /// refusal). A long poll calls this for its channel, as a WebSocket calls `opened`.
    func open(_ session: any WireChannel) {
        queue.async {
            self.session = session
            self.sessionForPushes.withLock { $0 = session }
            if let refusal = self.refusal {
                session.send(message: WireOutbound.shutdown(reason: refusal).bytes)
                return self.fail(.normal, "namespace not served")
            }
            // The handshake first: the client sends nothing before it
            // (docs/protocol/wire.md §2.3).
            session.send(message: WireOutbound.handshake(timestamp: self.context.clock(), host: self.host, sessionID: self.sessionID.description).bytes)
        }
    }

    func received(_ message: WebSocketMessage) {
        // A block of its own even on the connection's queue: taken inline, a reply or a
        // close would re-enter the connection in the middle of its frame loop (the test
        // suite crashed in libdispatch's event loop that way).
        queue.async { self.take(message) }
    }

    /// Messages that came together (a long poll's): taken in one block, so each finds the
    /// ones before it already taken. A request answered meanwhile is seen after the last,
    /// and those that came behind a running one wait whatever the database's pace.
    func received(_ messages: [WebSocketMessage]) {
        guard !messages.isEmpty else { return }
        queue.async { for message in messages { self.take(message) } }
    }

    func closed(code: WebSocketCloseCode?) {
        queue.async { self.end() }
    }

    // MARK: Input

    private func take(_ message: WebSocketMessage) {
        guard !closed else { return }
        guard case .text(let frame) = message else { return fail(.unsupportedData, "binary frames are not part of the protocol") }
        let whole: [UInt8]
        do {
            let output = try assembler.take(frame)
            if assembler.heldByteCount != reportedHeld {
                // Chunks held count against the server's bound on incomplete input.
                reportedHeld = assembler.heldByteCount
                session?.holding(reportedHeld)
            }
            switch output {
            case .message(let bytes): whole = bytes
            case .keepAlive, .needMore: return
            }
        } catch {
            // Either way the message cannot fit: 1009 (RFC 6455 §7.4.1).
            return fail(.messageTooBig, error.reason(context.limits.frames))
        }
        let inbound: WireInbound
        do {
            inbound = try WireInbound.decode(whole)
        } catch {
            if case .nestingTooDeep(let number) = error {
                return badMessage(number: number, status: "invalid_data", error.reason(context.limits.frames))
            }
            return badMessage(number: nil, "malformed message")
        }
        switch inbound {
        case .ping:
            session?.send(message: WireOutbound.pong.bytes)
        case .control, .ignored:
            break
        case .request:
            guard inbox.count < context.limits.maxPendingRequests || session?.pausesReading == true else {
                return fail(.policyViolation, "Over \(context.limits.maxPendingRequests) requests waiting; read the answers before sending more")
            }
            if !busy && inbox.isEmpty { return start(inbound, bytes: whole.count) }
            inbox.append(whole)
            inboxBytes += whole.count
            reportWaiting()
        }
    }

    /// Tells the connection what the session holds of whole requests: those waiting, and
    /// the running one when it is large (its tree lives until it is answered, a write's
    /// behind the database's writer). Past `maxWaitingRequestBytes` or `maxPendingRequests`
    /// waiting, the connection stops reading until the session catches up.
    private func reportWaiting() {
        let running = busy && requestBytes > HTTPLimits.alwaysHeldBytes ? requestBytes : 0
        let now = (bytes: inboxBytes + running, pause: inboxBytes > context.limits.maxWaitingRequestBytes
                   || inbox.count >= context.limits.maxPendingRequests)
        guard now != reportedWaiting, !closed else { return }
        reportedWaiting = now
        session?.waiting(now.bytes, pause: now.pause)
    }

    /// Starts the next request when none is running.
    private func next() {
        guard !busy, !closed, !inbox.isEmpty else { return reportWaiting() }
        let whole = inbox.removeFirst()
        inboxBytes -= whole.count
        // It decoded as a request when it came.
        guard let request = try? WireInbound.decode(whole) else { return next() }
        start(request, bytes: whole.count)
    }

    /// Runs `request` (none is running).
    private func start(_ request: WireInbound, bytes: Int) {
        busy = true
        requestBytes = bytes
        reportWaiting()
        guard case .request(let number, let action, let body) = request else { return done() }
        guard Self.actionsJudgedByIdentity.contains(action), credential.caller != .unauthenticated else {
            return handle(number: number, action: action, body: body)
        }
        // Every request is judged by an identity still valid now, as REST judges a token on
        // every request: its expiry, and its user's status within
        // AuthSettings.userStatusCacheSeconds. Decided here from the caches when they can
        // tell; else on the work queue (a database read), then back in order.
        let (authenticator, held) = (context.authenticator, credential)
        if let standing = authenticator.standing(of: held, cacheOnly: true) {
            return judged(standing, of: held, number: number, action: action, body: body)
        }
        context.work.async {
            let standing = authenticator.standing(of: held, cacheOnly: false) ?? .good
            self.queue.async {
                guard !self.closed else { return }
                self.judged(standing, of: held, number: number, action: action, body: body)
            }
        }
    }

    /// The actions whose outcome depends on who asks: listens, writes, reads, onDisconnect
    /// registrations. (`n`/`u`, `oc`, `s` and `auth` itself do not.)
    static let actionsJudgedByIdentity: Set<String> = ["q", "l", "p", "m", "g", "o", "om"]

    /// Handles a request once the identity it runs under was judged: a lapsed one is
    /// dropped first (`lapse`), and the request runs signed out.
    private func judged(_ standing: Authenticator.Standing, of held: Authenticator.Credential,
                        number: Int64?, action: String, body: JSONValue) {
        if standing != .good, held.caller == credential.caller { lapse(standing) }
        handle(number: number, action: action, body: body)
    }

    /// The identity lapsed on this open connection: `ac` (the SDKs forget the token, close
    /// and reconnect with a fresh one), and the connection is signed out, which cancels its
    /// listens with `c` (`setCredential`), as Firebase does when a token expires or is
    /// revoked.
    /// `standing` nil: a listen's gate found it lapsed, without saying how.
    func lapse(_ standing: Authenticator.Standing?) {
        let reason = switch standing {
        case .expired?: "Auth token is expired"
        case .revoked?: "Auth token is revoked"
        case .good?, nil: "Auth token is expired or revoked"
        }
        session?.send(message: WireOutbound.push(action: "ac", body: .object([
            "s": .string("expired_token"), "d": .string(reason)])).bytes)
        setCredential(Authenticator.Credential(caller: .unauthenticated))
    }

    /// The running request answered: on to the next.
    func done() {
        busy = false
        profiling = nil
        next()
    }

    /// Answers request `number` (if it has one) after the pushes queued so far, then runs
    /// the next request. Call on `queue`.
    func answer(_ number: Int64?, _ status: String, _ data: JSONValue) {
        if let number, let session {
            let bytes = WireOutbound.response(number: number, status: status, data: data).bytes
            profiling?.answered(context.database.profiler, bytesOut: bytes.count)
            if listens.isEmpty {
                // No listen, no pushes for this client to precede the answer: send it now
                // rather than through the hub's one fan-out queue.
                session.send(message: bytes)
            } else {
                context.hub.afterQueuedEvents { session.send(message: bytes) }
            }
        }
        done()
    }

    /// `answer` from any thread.
    func answerLater(_ number: Int64?, _ status: String, _ data: JSONValue) {
        queue.async { self.answer(number, status, data) }
    }

    private func badMessage(number: Int64?, status: String = "invalid_action", _ reason: String) {
        badMessages += 1
        if badMessages > context.limits.maxBadMessages {
            return fail(.policyViolation, "Over \(context.limits.maxBadMessages) malformed messages or unknown actions on this connection")
        }
        if let number, let session {
            session.send(message: WireOutbound.response(number: number, status: status, data: .string(reason)).bytes)
        }
    }

    /// Closes the session with `code`; a policy close (1008, 1009, 1013: the client was
    /// refused, not gone) is logged with its address and reason.
    func fail(_ code: WebSocketCloseCode, _ reason: String) {
        let reason = String(reason.prefix(100))
        if code.isPolicyClose { context.logger.notice("wire: closed \(address) with \(code): \(reason)") }
        session?.close(code, reason: reason)
        end()
    }

    // MARK: Requests (docs/protocol/wire.md §3.2)

    private func handle(number: Int64?, action: String, body: JSONValue) {
        let members: [JSONKey: JSONValue]
        if case .object(let object) = body { members = object } else { members = [:] }
        if context.database.profiler.isRecording {
            profiling = WireProfiling(context.database.profiler, action: action, body: body, bytesIn: requestBytes)
        }
        switch action {
        case "s", "appcheck", "unappeck", "unappcheck":
            answer(number, "ok", .string(""))
        case "auth", "gauth":
            guard case .string(let token)? = members["cred"] else { return invalid(number, "auth needs cred") }
            authenticate(number: number, token: token)
        case "unauth":
            setCredential(Authenticator.Credential(caller: .unauthenticated))
            answer(number, "ok", .string(""))
        case "q", "l":
            listen(number: number, members)
        case "n", "u":
            unlisten(number: number, members)
        case "p":
            put(number: number, members)
        case "m":
            merge(number: number, members)
        case "g":
            get(number: number, members)
        case "o", "om":
            registerOnDisconnect(number: number, merge: action == "om", members)
        case "oc":
            guard let path = requestPath(number, members, action: "oc") else { return }
            let cancelled = onDisconnect.filter { path.isPrefix(of: $0.base) }
            onDisconnect.removeAll { path.isPrefix(of: $0.base) }
            let freed = cancelled.reduce(0) { $0 + $1.bytes }
            onDisconnectBytes -= freed
            context.sessions.onDisconnectBudget.release(freed, for: address)
            let (ledger, session, positions) = (context.onDisconnect, sessionID.description, cancelled.map(\.position))
            context.work.async {
                do {
                    try ledger.cancel(session: session, positions: positions)
                    self.answerLater(number, "ok", .string(""))
                } catch {
                    let failure = DatabaseError.from(error)
                    self.queue.async { self.failed(number, failure) }
                }
            }
        case "":
            invalid(number, "a request needs its action a, a string")
        default:
            invalid(number, "unknown action \(action.prefix(20))")
        }
    }

    func invalid(_ number: Int64?, _ reason: String) {
        badMessage(number: number, reason)
        done()
    }

    /// The request's `p`, or nil after answering: without one the request is malformed
    /// (`invalid_action`, a bad message); one that is no valid path (`.info` or `.settings`
    /// written to, `..`, control characters, a key over 768 bytes, too deep) is
    /// `invalid_data` with the reason, as bad data is.
    func requestPath(_ number: Int64?, _ members: [JSONKey: JSONValue], action: String) -> DataPath? {
        guard case .string(let text)? = members["p"] else {
            invalid(number, "\(action) needs p")
            return nil
        }
        do {
            return try DataPath(string: text)
        } catch {
            answer(number, "invalid_data", .string(error.description))
            return nil
        }
    }

    /// The failure answer for a core error: a Firebase status and a non-empty string.
    static func status(of error: DatabaseError) -> (String, String) {
        switch error {
        case .permissionDenied: return ("permission_denied", "Permission denied")
        case .stale: return ("datastale", "The transaction's data is stale")
        case .tooLarge: return ("write_too_big", "Write too large")
        case .invalidValue(let error): return ("invalid_data", error.description)
        case .tooManyTriggerEvents: return ("write_too_big", "The write would cause too many trigger events")
        case .storageFull: return ("unavailable", "The server's disk is full")
        case .unavailable: return ("unavailable", "The database is unavailable; try again")
        case .outcomeUnknown: return ("unavailable", "The database connection was lost during the write; whether it was written is unknown")
        case .tooManyListens, .tooManyListensFromAddress: return ("unavailable", "Too many open listens")
        case .internalError: return ("unavailable", "Internal server error")
        }
    }

    func failed(_ number: Int64?, _ error: DatabaseError) {
        switch error {
        case .internalError(let reason): context.logger.error("\(reason)")
        case .unavailable(let cause): context.unavailable.refused("a wire-protocol request", cause: cause)
        case .outcomeUnknown(let cause): context.unavailable.refused("a wire-protocol write", cause: cause, outcomeUnknown: true)
        default: break
        }
        let (status, text) = Self.status(of: error)
        answer(number, status, .string(text))
    }

    // MARK: End

    /// The client reconnected with `ls` naming this session: close it and run its
    /// onDisconnect operations now. `then` runs once they are committed, so the new session
    /// reads and writes after them. Asynchronous: the caller is on an I/O queue, maybe the
    /// very one that is this session's queue.
    func endForReconnect(then: @escaping @Sendable () -> Void) {
        queue.async {
            if self.closed { return then() }
            self.session?.close(.normal, reason: "replaced by a new connection")
            self.end(then: then)
        }
    }

    /// This node lost its database lease (`EngineHooks.onLeaseLost`): another node runs
    /// this session's onDisconnect operations from their records, so close the connection
    /// without running them here. The client reconnects (to any node) and registers them
    /// again.
    func endForLostLease() {
        queue.async {
            guard !self.closed else { return }
            self.onDisconnect = []
            self.context.sessions.onDisconnectBudget.release(self.onDisconnectBytes, for: self.address)
            self.onDisconnectBytes = 0
            self.registeredOnDisconnect = false
            self.session?.close(.goingAway, reason: "this server lost its database lease; reconnect")
            self.end()
        }
    }

    /// The connection ended (any reason): stop listening, then run the queued onDisconnect
    /// operations in registration order, each judged by the rules again as its registrant,
    /// server values resolved now; `then` after they committed. Their records are removed
    /// on the work queue (the store may block; this session's queue is its connection's I/O).
    /// A session that never registered an operation has none to remove.
    func end(then: @escaping @Sendable () -> Void = {}) {
        guard !closed else { return then() }
        closed = true
        context.sessions.remove(id: sessionID)
        inbox = []
        inboxBytes = 0
        assembler = WireFrameAssembler(limits: context.limits.frames)  // chunks of a message never finished
        for listen in listens { listen.listening.cancel() }
        listens = []
        let entries = onDisconnect
        onDisconnect = []
        // Handed to the writer: their bytes are no longer this connection's.
        context.sessions.onDisconnectBudget.release(onDisconnectBytes, for: address)
        onDisconnectBytes = 0
        guard registeredOnDisconnect else { return then() }
        let (ledger, session) = (context.onDisconnect, sessionID.description)
        context.work.async {
            ledger.run(session: session, entries, completion: then)
        }
    }
}

extension WireSession {
    /// From the fan-out queue: the bytes go straight to the socket (the session hops onto
    /// its I/O queue, keeping the fan-out queue's order).
    func pushNow(_ message: [UInt8]) {
        pushTarget?.send(message: message)
    }

    /// The channel pushes go to (set once the session opened).
    var pushTarget: (any WireChannel)? { sessionForPushes.withLock { $0 } }
}
