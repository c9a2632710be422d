import Dispatch
import HearthHTTP
import HearthJSON
import HearthRules
import HearthStore
import HearthStreams
import HearthWire
import Logging
import Synchronization

/// Named bounds of one wire-protocol connection (issue 14: every limit named and tested;
/// the serve settings `wireMax…` set them).
public struct WireSessionLimits: Sendable, Equatable {
    /// Listens open at once on one connection; past it a `q` is answered `max_listens`
    /// (the connection stays). A quarter of the default streams per address: listens count
    /// against that cap too, and one connection must not take its address's whole budget
    /// (another user behind the same NAT would get `unavailable`, its SSE streams 429).
    public static let defaultMaxListens = StreamOptions.defaultMaxStreamsPerAddress / connectionsToFillAnAddress
    /// How many connections it takes at least to use up an address's streams
    /// (`StreamOptions.maxStreamsPerAddress`) with listens: one connection's listens are
    /// capped at that share whatever `maxListens` says (`fitted(toStreamsPerAddress:)`).
    public static let connectionsToFillAnAddress = 4
    /// onDisconnect operations queued on one connection; past it `o`/`om` are answered
    /// `too_many_ondisconnect`.
    public static let defaultMaxOnDisconnect = 100
    /// Requests received and not yet answered; past it the connection is closed with 1008
    /// (a client that sends faster than it lets the server answer).
    public static let defaultMaxPendingRequests = 1_000
    /// Failed `auth`/`gauth` attempts on one connection; past it the connection is closed
    /// with 1008.
    public static let defaultMaxAuthFailures = 10
    /// Malformed messages or unknown actions on one connection; past it the connection is
    /// closed with 1008.
    public static let defaultMaxBadMessages = 20

    public var maxListens = defaultMaxListens
    public var maxOnDisconnect = defaultMaxOnDisconnect
    public var maxPendingRequests = defaultMaxPendingRequests
    public var maxAuthFailures = defaultMaxAuthFailures
    public var maxBadMessages = defaultMaxBadMessages
    var frames = WireLimits()

    public init() {}

    /// These limits with `maxListens` at most `1 / connectionsToFillAnAddress` of
    /// `streamsPerAddress` (at least 1).
    public func fitted(toStreamsPerAddress streamsPerAddress: Int) -> WireSessionLimits {
        var fitted = self
        fitted.maxListens = min(maxListens, max(1, streamsPerAddress / Self.connectionsToFillAnAddress))
        return fitted
    }
}

/// What a wire-protocol session needs from the server (passed in; no globals). One object
/// for all sessions: each holds a reference, which keeps an idle connection small.
final class WireContext: Sendable {
    let database: Database
    let hub: StreamHub
    let authenticator: Authenticator
    /// Where blocking work runs: token checks (a signature, a user row) and the
    /// onDisconnect records (SQLite). Never a session's queue, which is its connection's
    /// I/O queue.
    let work: DispatchQueue
    let clock: @Sendable () -> Int64
    let logger: Logger
    let limits: WireSessionLimits
    /// Namespaces served (`ns`); empty: any.
    let namespaces: Set<String>
    /// Where onDisconnect operations are kept and run.
    let onDisconnect: OnDisconnectLedger
    /// Open sessions by id, for a reconnecting client's `ls` (spec §4.5), and for closing
    /// them all when the node lost its lease.
    let sessions: WireSessionRegistry

    init(database: Database, hub: StreamHub, authenticator: Authenticator, work: DispatchQueue,
         clock: @escaping @Sendable () -> Int64, logger: Logger, limits: WireSessionLimits = WireSessionLimits(),
         namespaces: Set<String> = [], onDisconnect: OnDisconnectLedger, sessions: WireSessionRegistry = WireSessionRegistry()) {
        self.sessions = sessions
        self.database = database
        self.hub = hub
        self.authenticator = authenticator
        self.work = work
        self.clock = clock
        self.logger = logger
        self.limits = limits
        self.namespaces = namespaces
        self.onDisconnect = onDisconnect
    }
}

/// The open sessions of this server by session id (`s` of their handshake), so that a
/// client reconnecting with `ls=<old id>` can end its old session at once (spec §4.5, §6.3).
final class WireSessionRegistry: Sendable {
    private let open = Mutex<[WireSessionID: WireSession]>([:])

    func add(_ session: WireSession, id: WireSessionID) {
        open.withLock { $0[id] = session }
    }

    func remove(id: WireSessionID) {
        _ = open.withLock { $0.removeValue(forKey: id) }
    }

    /// Every open session.
    func all() -> [WireSession] {
        open.withLock { Array($0.values) }
    }

    /// Removes and returns the session `id`, if it is still open.
    func take(id: WireSessionID) -> WireSession? {
        open.withLock { $0.removeValue(forKey: id) }
    }

}

/// A session's id: 128 random bits, shown as 32 hex digits (the handshake's `s`, a
/// reconnecting client's `ls`). Two words rather than a string: kept per connection.
struct WireSessionID: Hashable, Sendable, CustomStringConvertible {
    let high: UInt64
    let low: UInt64

    init(high: UInt64, low: UInt64) {
        (self.high, self.low) = (high, low)
    }

    /// The id a client names; nil when `hex` is not 32 hex digits.
    init?(hex: String) {
        let digits = Array(hex.utf8)
        let isHex: (UInt8) -> Bool = { (48...57).contains($0) || (97...102).contains($0) || (65...70).contains($0) }
        guard digits.count == 32, digits.allSatisfy(isHex), let high = UInt64(String(decoding: digits[0..<16], as: UTF8.self), radix: 16),
              let low = UInt64(String(decoding: digits[16..<32], as: UTF8.self), radix: 16) else { return nil }
        (self.high, self.low) = (high, low)
    }

    var description: String {
        [high, low].map { word in
            let text = String(word, radix: 16)
            return String(repeating: "0", count: 16 - text.count) + text
        }.joined()
    }
}

/// One client of the Firebase wire protocol (spec/firebase-wire-protocol.md) on a
/// WebSocket: the second adapter over the database core, beside REST + SSE.
///
/// Requests are handled one at a time in arrival order (spec §3.1): the next starts when
/// the previous one answered. Every answer is sent through `StreamHub.afterQueuedEvents`,
/// so the pushes of writes committed before it (including this client's own write, and a
/// listen's first data) reach the client first (§4.2, §4.3).
///
/// `@unchecked Sendable`: all mutable state is confined to `queue` (serial).
final class WireSession: WebSocketHandler, @unchecked Sendable {
    private let context: WireContext
    private let host: String
    private let address: String
    private let sessionID: WireSessionID
    /// The connection's serial I/O queue (a queue of its own when there is none, in unit
    /// tests): a message is handled where it was read and an answer is written from the
    /// block that makes it, so a `p` costs the hops of a REST write (to the writer and
    /// back), and a session has no queue object of its own.
    private let queue: DispatchQueue

    // Confined to `queue`.
    private var session: WebSocketSession?
    /// The same session for the hub's fan-out queue, which sends pushes directly so that
    /// they keep their order with the answers sent from there.
    private let sessionForPushes = Mutex<WebSocketSession?>(nil)
    private var assembler: WireFrameAssembler
    /// What `assembler` holds as the connection last heard (`WebSocketSession.holding`).
    private var reportedHeld = 0
    private var inbox: [WireInbound] = []
    private var busy = false
    private var closed = false
    private var credential = Authenticator.Credential(caller: .unauthenticated)
    /// The times of `credential` as the gates of this session's listens see them (made at
    /// the first listen under an identity; renewed by a same-identity `auth`).
    private var credentialTimes: CredentialTimes?
    /// In opening order. An array, not a dictionary: most sessions hold one or a few
    /// listens, and a one-entry dictionary costs ~200 bytes per idle connection; lookups
    /// scan at most `WireSessionLimits.maxListens`.
    private var listens: [OpenListen] = []
    private var onDisconnect: [OnDisconnectLedger.Entry] = []
    private var nextPosition: Int64 = 0
    /// Whether any onDisconnect record was ever written for this session (else its end
    /// has none to remove).
    private var registeredOnDisconnect = false
    private var authFailures = 0
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

    private func listenIndex(_ key: ListenKey) -> Int? {
        listens.firstIndex { $0.key == key }
    }

    /// Why this session is refused at once (an unknown namespace): it gets the protocol's
    /// shutdown (`s`, the SDK does not reconnect) instead of the handshake.
    private let refusal: String?

    init(context: WireContext, host: String, address: String, sessionID: WireSessionID, refusal: String? = nil,
         connectionQueue: DispatchQueue? = nil) {
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
        queue.async {
            self.session = session
            self.sessionForPushes.withLock { $0 = session }
            if let refusal = self.refusal {
                session.send(text: WireOutbound.shutdown(reason: refusal).bytes)
                return self.fail(.normal, "namespace not served")
            }
            // The handshake first: the client sends nothing before it (spec §2.3).
            session.send(text: WireOutbound.handshake(timestamp: self.context.clock(), host: self.host, sessionID: self.sessionID.description).bytes)
        }
    }

    func received(_ message: WebSocketMessage) {
        // A block of its own even on the connection's queue: taken inline, a reply or a
        // close would re-enter the connection in the middle of its frame loop (the test
        // suite crashed in libdispatch's event loop that way).
        queue.async { self.take(message) }
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
            session?.send(text: WireOutbound.pong.bytes)
        case .control, .ignored:
            break
        case .request:
            guard inbox.count < context.limits.maxPendingRequests else {
                return fail(.policyViolation, "Over \(context.limits.maxPendingRequests) requests waiting; read the answers before sending more")
            }
            inbox.append(inbound)
            next()
        }
    }

    /// Starts the next request when none is running.
    private func next() {
        guard !busy, !closed, !inbox.isEmpty else { return }
        busy = true
        let request = inbox.removeFirst()
        guard case .request(let number, let action, let body) = request else { return done() }
        guard Self.actionsJudgedByIdentity.contains(action), credential.caller != .unauthenticated else {
            return handle(number: number, action: action, body: body)
        }
        // Every request is judged by an identity still valid now, as REST judges a token on
        // every request (issue 25): its expiry, and its user's status within
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
    private func lapse(_ standing: Authenticator.Standing?) {
        let reason = switch standing {
        case .expired?: "Auth token is expired"
        case .revoked?: "Auth token is revoked"
        case .good?, nil: "Auth token is expired or revoked"
        }
        session?.send(text: WireOutbound.push(action: "ac", body: .object([
            "s": .string("expired_token"), "d": .string(reason)])).bytes)
        setCredential(Authenticator.Credential(caller: .unauthenticated))
    }

    /// The running request answered: on to the next.
    private func done() {
        busy = false
        next()
    }

    /// Answers request `number` (if it has one) after the pushes queued so far, then runs
    /// the next request. Call on `queue`.
    private func answer(_ number: Int64?, _ status: String, _ data: JSONValue) {
        if let number, let session {
            let bytes = WireOutbound.response(number: number, status: status, data: data).bytes
            if listens.isEmpty {
                // No listen, no pushes for this client to precede the answer: send it now
                // rather than through the hub's one fan-out queue.
                Self.send(bytes, on: session)
            } else {
                context.hub.afterQueuedEvents { Self.send(bytes, on: session) }
            }
        }
        done()
    }

    /// `answer` from any thread.
    private func answerLater(_ number: Int64?, _ status: String, _ data: JSONValue) {
        queue.async { self.answer(number, status, data) }
    }

    /// Sends one message, in chunks when it is long (spec §2.1).
    static func send(_ message: [UInt8], on session: WebSocketSession) {
        for frame in WireOutbound.frames(message) { session.send(text: frame) }
    }

    private func badMessage(number: Int64?, status: String = "invalid_action", _ reason: String) {
        badMessages += 1
        if badMessages > context.limits.maxBadMessages {
            return fail(.policyViolation, "Over \(context.limits.maxBadMessages) malformed messages or unknown actions on this connection")
        }
        if let number, let session {
            session.send(text: WireOutbound.response(number: number, status: status, data: .string(reason)).bytes)
        }
    }

    /// Closes the session with `code`; a policy close (1008, 1009, 1013: the client was
    /// refused, not gone) is logged with its address and reason.
    private func fail(_ code: WebSocketCloseCode, _ reason: String) {
        let reason = String(reason.prefix(100))
        if code.isPolicyClose { context.logger.notice("wire: closed \(address) with \(code): \(reason)") }
        session?.close(code, reason: reason)
        end()
    }

    // MARK: Requests (spec §3.2)

    private func handle(number: Int64?, action: String, body: JSONValue) {
        let members: [JSONKey: JSONValue]
        if case .object(let object) = body { members = object } else { members = [:] }
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
            let cancelled = onDisconnect.filter { path.isPrefix(of: Self.base(of: $0.operation)) }
            onDisconnect.removeAll { path.isPrefix(of: Self.base(of: $0.operation)) }
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
        default:
            invalid(number, "unknown action \(action.prefix(20))")
        }
    }

    static func base(of operation: WriteOperation) -> DataPath {
        switch operation {
        case .set(let entry): return entry.path
        case .update(let base, _): return base
        }
    }

    private func invalid(_ number: Int64?, _ reason: String) {
        badMessage(number: number, reason)
        done()
    }

    /// The request's `p`, or nil after answering: without one the request is malformed
    /// (`invalid_action`, a bad message); one that is no valid path (`.info` or `.settings`
    /// written to, `..`, control characters, a key over 768 bytes, too deep) is
    /// `invalid_data` with the reason, as bad data is (issue 25).
    private func requestPath(_ number: Int64?, _ members: [JSONKey: JSONValue], action: String) -> DataPath? {
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
        case .storageFull: return ("unavailable", "The server's disk is full")
        case .unavailable: return ("unavailable", "The database is unavailable; try again")
        case .outcomeUnknown: return ("unavailable", "The database connection was lost during the write; whether it was written is unknown")
        case .tooManyListens, .tooManyListensFromAddress: return ("unavailable", "Too many open listens")
        case .internalError: return ("unavailable", "Internal server error")
        }
    }

    private func failed(_ number: Int64?, _ error: DatabaseError) {
        if case .internalError(let reason) = error { context.logger.error("\(reason)") }
        let (status, text) = Self.status(of: error)
        answer(number, status, .string(text))
    }

    // MARK: Auth (spec §4.7)

    private func authenticate(number: Int64?, token: String) {
        // A token the server verified before (the cache, as REST's): decided here, without
        // a hop to the work queue (thousands of clients reconnecting with their tokens
        // would otherwise wake a worker thread each).
        context.authenticator.decide(token: token, work: context.work, replyOn: queue) { result in
            switch result {
            case .success(let credential): self.authenticated(number, credential)
            case .failure(let error): self.authenticationFailed(number, error)
            }
        }
    }

    private func authenticated(_ number: Int64?, _ credential: Authenticator.Credential) {
        setCredential(credential)
        let expires: JSONValue = credential.expiresAt.map { .int($0 / 1000) } ?? .null
        answer(number, "ok", .object(["auth": credential.caller.auth, "expires": expires]))
    }

    /// A failed `auth` signs the connection out (issue 25): the identity it held before does
    /// not stay in force, and its listens are cancelled. Firebase's clients close and
    /// reconnect after any failed `auth` (spec §4.7: "until auth succeeds the connection is
    /// unauthenticated"), so one that stays sees what a signed-out user sees.
    private func authenticationFailed(_ number: Int64?, _ error: Authenticator.CredentialError) {
        authFailures += 1
        if authFailures > context.limits.maxAuthFailures {
            busy = false
            return fail(.policyViolation, "Over \(context.limits.maxAuthFailures) failed auth attempts on this connection; sign in again")
        }
        setCredential(Authenticator.Credential(caller: .unauthenticated))
        answer(number, error == .expired ? "expired_token" : "invalid_token", .string(error.message))
    }

    /// A new identity: listens opened under another one are ended with `c` (the client
    /// cancels those listeners; it re-listens under the new identity if it wants to). A
    /// refreshed token of the same identity keeps them.
    private func setCredential(_ new: Authenticator.Credential) {
        let same = new.caller == credential.caller
        credential = new
        if same {
            // A refreshed token of the same identity: the open listens follow its times.
            credentialTimes?.renew(issuedAt: new.issuedAt, expiresAt: new.expiresAt)
            return
        }
        credentialTimes = nil
        for listen in listens {
            listen.listening.cancel()
            revoked(listen.key, tag: listen.tag)
        }
        listens = []
    }

    // MARK: Listens (spec §4.2)

    private func listen(number: Int64?, _ members: [JSONKey: JSONValue]) {
        guard let path = requestPath(number, members, action: "listen") else { return }
        let queryObject = members["q"] ?? JSONValue.object([JSONKey: JSONValue]())
        let wire: WireQuery
        let mapped: WireListenQuery?
        do {
            wire = try WireQuery(queryObject)
            mapped = wire.filters ? try WireListenQuery(wire) : nil
        } catch {
            return invalid(number, "bad query")
        }
        let tag: Int64? = mapped == nil ? nil : { if case .int(let t)? = members["t"] { return t } else { return nil } }()
        // A query that filters carries its tag (the SDKs always send one, spec §4.2): its
        // pushes are told from the path's default listen by it. Int64.min is the sink's
        // "no tag" (it keeps the sink inline); no SDK counts there.
        if mapped != nil && (tag == nil || tag == WireListenSink.noTag) {
            return invalid(number, "a query with bounds or a limit needs its tag t")
        }
        let key = ListenKey(path: path, query: mapped == nil ? JSONValue.object([JSONKey: JSONValue]()) : queryObject)
        if listenIndex(key) != nil { return answer(number, "ok", JSONValue.object([JSONKey: JSONValue]())) }
        guard listens.count < context.limits.maxListens else {
            return answer(number, "max_listens", .string("Too many listens on this connection"))
        }
        var warnings: JSONValue = JSONValue.object([JSONKey: JSONValue]())
        if context.database.missingIndex(mapped?.listen, at: path) != nil {
            // The SDK logs its "unspecified index" warning; Hearth serves the query anyway
            // (spec §4.2 item 5), as REST refuses it only to match Firebase's REST.
            warnings = .object(["w": .array([.string("no_index")])])
        }
        let okData = warnings
        let times = credentialTimes ?? CredentialTimes(issuedAt: credential.issuedAt, expiresAt: credential.expiresAt)
        credentialTimes = times
        let gate = SubscriberGate(caller: credential.caller, uid: credential.uid, times: times, query: mapped?.listen.rules)
        let sink = WireListenSink(session: self, path: path, tag: tag)
        context.database.listen(path, query: mapped?.listen, as: credential.caller, gate: gate, address: address,
                                hub: context.hub, sink: sink) { result in
            self.queue.async {
                switch result {
                case .success(let listening):
                    if self.closed {
                        listening.cancel()
                        return self.done()
                    }
                    self.listens.append(OpenListen(key: key, listening: listening, tag: tag))
                    self.answer(number, "ok", okData)
                case .failure(let error):
                    self.failed(number, error)
                }
            }
        }
    }

    private func unlisten(number: Int64?, _ members: [JSONKey: JSONValue]) {
        guard let path = requestPath(number, members, action: "unlisten") else { return }
        let queryObject = members["q"] ?? JSONValue.object([JSONKey: JSONValue]())
        let filters = (try? WireQuery(queryObject))?.filters ?? false
        let key = ListenKey(path: path, query: filters ? queryObject : JSONValue.object([JSONKey: JSONValue]()))
        if let index = listenIndex(key) { listens.remove(at: index).listening.cancel() }
        answer(number, "ok", .string(""))
    }

    /// The hub ended the listen at `path` with `tag` (access lost, or the credential
    /// expired). A session has one listen per path and tag: one default listen per path,
    /// and the SDK gives each query its own tag.
    fileprivate func listenEnded(path: DataPath, tag: Int64?, verdict: StreamVerdict) {
        queue.async {
            guard let index = self.listens.firstIndex(where: { $0.key.path == path && $0.tag == tag }) else { return }
            let listen = self.listens.remove(at: index)
            switch verdict {
            case .authRevoked:
                // The client forgets its token, reconnects and authenticates again (§3.3).
                self.lapse(nil)
            case .cancel, .keep:
                self.revoked(listen.key, tag: listen.tag)
            case .reconnect:
                // This node missed changes: the client reconnects and listens again, and
                // gets whole values then (the protocol has no "start over" for a listen).
                self.session?.close(.goingAway, reason: "missed changes; reconnect")
                self.end()
            }
        }
    }

    /// Pushes `c` for a listen the server dropped (§3.3: `q` as an array, omitted for a
    /// location listen).
    private func revoked(_ key: ListenKey, tag: Int64?) {
        var body: [JSONKey: JSONValue] = ["p": .string(key.path.description)]
        if tag != nil { body["q"] = .array([key.query]) }
        if let session { Self.send(WireOutbound.push(action: "c", body: .object(body)).bytes, on: session) }
    }

    // MARK: Writes (spec §4.3, §4.4)

    private func put(number: Int64?, _ members: [JSONKey: JSONValue]) {
        guard let data = members["d"] else { return invalid(number, "put needs p and d") }
        guard let path = requestPath(number, members, action: "put") else { return }
        let operation: WriteOperation
        do {
            operation = try WriteRequest.set(data, at: path)
        } catch {
            return answer(number, "invalid_data", .string(error.description))
        }
        var precondition: Database.Precondition? = nil
        if case .string(let hash)? = members["h"] {
            precondition = Database.Precondition(expected: hash, withPriorities: true, tag: SDKHash.hash)
        }
        write(number: number, operation, precondition: precondition)
    }

    private func merge(number: Int64?, _ members: [JSONKey: JSONValue]) {
        guard let data = members["d"] else { return invalid(number, "merge needs p and d") }
        guard let path = requestPath(number, members, action: "merge") else { return }
        do {
            guard let update = try WriteRequest.update(data, at: path) else { return answer(number, "ok", .string("")) }
            write(number: number, update, precondition: nil)
        } catch {
            answer(number, "invalid_data", .string(error.description))
        }
    }

    private func write(number: Int64?, _ operation: WriteOperation, precondition: Database.Precondition?) {
        context.database.write(operation, as: credential.caller, precondition: precondition) { result in
            switch result {
            case .success: self.answerLater(number, "ok", .string(""))
            case .failure(let error): self.queue.async { self.failed(number, error) }
            }
        }
    }

    // MARK: get (spec §4.8)

    private func get(number: Int64?, _ members: [JSONKey: JSONValue]) {
        // `.info/...` is client-side; the JS SDK still asks (spec §4.8): `ok` with null.
        // Checked before parsing: `.info` is not a valid key, so it never reaches the data.
        if case .string(let raw)? = members["p"], raw == "/.info" || raw.hasPrefix("/.info/") || raw.hasPrefix(".info") {
            return answer(number, "ok", .null)
        }
        guard let path = requestPath(number, members, action: "get") else { return }
        let mapped: WireListenQuery?
        do {
            let wire = try WireQuery(members["q"] ?? JSONValue.object([JSONKey: JSONValue]()))
            mapped = wire.filters ? try WireListenQuery(wire) : nil
        } catch {
            return invalid(number, "bad query")
        }
        context.database.read(path, query: mapped?.listen.rules, as: credential.caller, { view -> JSONValue in
            if let mapped { return FirebaseTree.render(try view.query(mapped.listen.tree, at: path)) }
            return FirebaseTree.render(try view.value(at: path))
        }, completion: { result in
            switch result {
            case .success(let value): self.answerLater(number, "ok", value)
            case .failure(let error): self.queue.async { self.failed(number, error) }
            }
        })
    }

    // MARK: onDisconnect (spec §4.5)

    private func registerOnDisconnect(number: Int64?, merge: Bool, _ members: [JSONKey: JSONValue]) {
        guard let data = members["d"] else { return invalid(number, "onDisconnect needs p and d") }
        guard let path = requestPath(number, members, action: "onDisconnect") else { return }
        let operation: WriteOperation
        do {
            if merge {
                guard let update = try WriteRequest.update(data, at: path) else { return answer(number, "ok", .string("")) }
                operation = update
            } else {
                operation = try WriteRequest.set(data, at: path)
            }
        } catch {
            return answer(number, "invalid_data", .string("\(error)"))
        }
        guard onDisconnect.count < context.limits.maxOnDisconnect else {
            return answer(number, "too_many_ondisconnect", .string("Too many onDisconnect operations on this connection"))
        }
        let caller = credential.caller
        context.database.checkWrite(operation, as: caller, now: context.clock()) { result in
            self.queue.async {
                switch result {
                case .success:
                    // The connection ended while this was being checked: the client never
                    // learns it was registered, and end() has run the queue already.
                    if self.closed { return self.done() }
                    let entry = OnDisconnectLedger.Entry(position: self.nextPosition, operation: operation, caller: caller)
                    self.nextPosition += 1
                    self.registeredOnDisconnect = true
                    let (ledger, session) = (self.context.onDisconnect, self.sessionID.description)
                    self.context.work.async {
                        let failure: DatabaseError?
                        do {
                            try ledger.register(session: session, entry)
                            failure = nil
                        } catch {
                            failure = DatabaseError.from(error)
                        }
                        self.queue.async {
                            if let failure { return self.failed(number, failure) }
                            if self.closed {
                                // Ended while the record was written: end() ran without it.
                                // The client never learns it was registered; forget it.
                                self.context.work.async { ledger.forget(session: session) }
                                return self.done()
                            }
                            self.onDisconnect.append(entry)
                            self.answer(number, "ok", .string(""))
                        }
                    }
                case .failure(let error):
                    self.failed(number, error)
                }
            }
        }
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
            self.registeredOnDisconnect = false
            self.session?.close(.goingAway, reason: "this server lost its database lease; reconnect")
            self.end()
        }
    }

    /// The connection ended (any reason): stop listening, then run the queued onDisconnect
    /// operations in registration order, each judged by the rules again as its registrant,
    /// server values resolved now; `then` after they committed. Their records are removed
    /// on the work queue (SQLite may block; this session's queue is its connection's I/O).
    /// A session that never registered an operation has none to remove.
    private func end(then: @escaping @Sendable () -> Void = {}) {
        guard !closed else { return then() }
        closed = true
        context.sessions.remove(id: sessionID)
        inbox = []
        assembler = WireFrameAssembler(limits: context.limits.frames)  // chunks of a message never finished
        for listen in listens { listen.listening.cancel() }
        listens = []
        let entries = onDisconnect
        onDisconnect = []
        guard registeredOnDisconnect else { return then() }
        let (ledger, session) = (context.onDisconnect, sessionID.description)
        context.work.async {
            ledger.run(session: session, entries, completion: then)
        }
    }
}

/// A listen's events as wire pushes: `d` (overwrite) for a put, `m` (merge) for a patch,
/// at the absolute path, with the listen's tag for a query.
///
/// Three words, so the hub's `any StreamEventSink` holds it inline (no allocation per
/// listen): the tag is stored with `noTag` for none.
struct WireListenSink: StreamEventSink {
    let session: WireSession
    let path: DataPath
    private let rawTag: Int64

    static let noTag = Int64.min

    init(session: WireSession, path: DataPath, tag: Int64?) {
        self.session = session
        self.path = path
        self.rawTag = tag ?? Self.noTag
    }

    var tag: Int64? { rawTag == Self.noTag ? nil : rawTag }

    func deliver(_ event: StreamEvent, seq: Int64) {
        session.pushNow(WireOutbound.frames(push(event)))
    }

    /// The `d` or `m` push of `event` for this listen. The same for every untagged listen
    /// on one location, so `StreamContext.broadcastEvents` encodes it once for all of them.
    func push(_ event: StreamEvent) -> [UInt8] {
        var target = path
        if event.path != "/", let relative = try? DataPath(string: event.path), let below = try? path.appending(relative) {
            target = below
        }
        var body: [JSONKey: JSONValue] = ["p": .string(target.description), "d": event.data]
        if let tag { body["t"] = .int(tag) }
        let action = event.name == .put ? "d" : "m"
        return WireOutbound.push(action: action, body: .object(body)).bytes
    }

    /// Listens with equal keys get the same bytes for every event.
    struct PushKey: Hashable {
        let path: DataPath
        let tag: Int64
    }

    var pushKey: PushKey { PushKey(path: path, tag: rawTag) }

    /// Where this listen's pushes go, nil once the session is gone.
    var pushSession: WebSocketSession? { session.pushTarget }

    func ended(_ verdict: StreamVerdict) {
        session.listenEnded(path: path, tag: tag, verdict: verdict)
    }
}

extension WireSession {
    /// From the fan-out queue: the bytes go straight to the socket (the session hops onto
    /// its I/O queue, keeping the fan-out queue's order).
    fileprivate func pushNow(_ frames: [[UInt8]]) {
        if let session = pushTarget { for frame in frames { session.send(text: frame) } }
    }

    /// The socket pushes go to (set once the session opened).
    var pushTarget: WebSocketSession? { sessionForPushes.withLock { $0 } }
}
