import HearthHTTP
import HearthRules
import HearthStreams
import Synchronization

/// What the hub keeps about a stream's right to read: the caller, and what must be
/// re-checked about its credential over time (DESIGN.md §5 "access over time").
struct SubscriberGate: StreamGate {
    let caller: Caller
    /// For revocation checks; nil for admin and unauthenticated callers.
    let uid: String?
    private let fixedIssuedAt: Int64?
    private let fixedExpiresAt: Int64?
    /// Set for a wire-protocol listen: the session's credential times, renewed when its
    /// client re-authenticates as the same identity.
    private let renewable: CredentialTimes?
    /// The stream's query as the rules see it (`query.*`), for every later re-check. Kept
    /// out of line: most listens have none, and inline it took 113 of the gate's bytes.
    private let queryBox: QueryBox?
    var query: RuleQuery? { queryBox?.query }

    private final class QueryBox: Sendable {
        let query: RuleQuery
        init(_ query: RuleQuery) { self.query = query }
    }

    /// A stream whose credential is fixed for its life (SSE: the request's token).
    init(caller: Caller, uid: String?, issuedAt: Int64?, expiresAt: Int64?, query: RuleQuery? = nil) {
        self.caller = caller
        self.uid = uid
        self.fixedIssuedAt = issuedAt
        self.fixedExpiresAt = expiresAt
        self.renewable = nil
        self.queryBox = query.map(QueryBox.init)
    }

    /// A listen that follows its session's credential times.
    init(caller: Caller, uid: String?, times: CredentialTimes, query: RuleQuery? = nil) {
        self.caller = caller
        self.uid = uid
        self.fixedIssuedAt = nil
        self.fixedExpiresAt = nil
        self.renewable = times
        self.queryBox = query.map(QueryBox.init)
    }

    /// The token's issue time (s), for revocation checks.
    var issuedAt: Int64? { renewable.map { $0.current.issuedAt } ?? fixedIssuedAt }
    var expiresAt: Int64? { renewable.map { $0.current.expiresAt } ?? fixedExpiresAt }
}

/// The issue and expiry times of a wire session's credential, shared by the gates of its
/// listens. The SDKs send a fresh ID token of the same user before the old one expires
/// (`auth` again, spec §4.7): the session renews these, and its open listens then expire
/// and are checked for revocation by the new token, not ended when the first one lapses.
final class CredentialTimes: Sendable {
    private let times: Mutex<(issuedAt: Int64?, expiresAt: Int64?)>

    init(issuedAt: Int64?, expiresAt: Int64?) {
        times = Mutex((issuedAt, expiresAt))
    }

    var current: (issuedAt: Int64?, expiresAt: Int64?) { times.withLock { $0 } }

    func renew(issuedAt: Int64?, expiresAt: Int64?) {
        times.withLock { $0 = (issuedAt, expiresAt) }
    }
}

/// A stream's typed events as server-sent events on its HTTP response (the SSE encoding;
/// `StreamContext.broadcastEvents` encodes an event once for all the SSE sinks of a
/// location).
struct SSEEventSink: StreamEventSink {
    let stream: HTTPEventStream

    func deliver(_ event: StreamEvent, seq: Int64) { stream.send(StreamFrames.event(event, id: seq)) }
    func ended(_ verdict: StreamVerdict) { stream.finish(verdict.finalBytes) }
    func keepAlive() { stream.send(StreamFrames.keepAlive) }
}
