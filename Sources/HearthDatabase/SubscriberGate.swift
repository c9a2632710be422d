import HearthRules
import HearthStreams
import Synchronization

/// What the hub keeps about a stream's right to read: the caller, and what must be
/// re-checked about its credential over time (docs/design.md §5 "access over time").
public struct SubscriberGate: StreamGate {
    public let caller: Caller
    /// For revocation checks; nil for admin and unauthenticated callers.
    public let uid: String?
    private let times: Times
    /// The stream's query as the rules see it (`query.*`), for every later re-check. Kept
    /// out of line: most listens have none, and inline it took 113 of the gate's bytes.
    private let queryBox: QueryBox?
    public var query: RuleQuery? { queryBox?.query }

    /// An SSE stream's credential is fixed for its life (the request's token); a wire
    /// listen follows its session's, renewed when the client re-authenticates.
    private enum Times {
        case fixed(issuedAt: Int64?, expiresAt: Int64?)
        case renewable(CredentialTimes)
    }

    private final class QueryBox: Sendable {
        let query: RuleQuery
        init(_ query: RuleQuery) { self.query = query }
    }

    private init(caller: Caller, uid: String?, times: Times, query: RuleQuery?) {
        self.caller = caller
        self.uid = uid
        self.times = times
        self.queryBox = query.map(QueryBox.init)
    }

    /// A stream whose credential is fixed for its life (SSE).
    public init(caller: Caller, uid: String?, issuedAt: Int64?, expiresAt: Int64?, query: RuleQuery? = nil) {
        self.init(caller: caller, uid: uid, times: .fixed(issuedAt: issuedAt, expiresAt: expiresAt), query: query)
    }

    /// A listen that follows its session's credential times.
    public init(caller: Caller, uid: String?, times: CredentialTimes, query: RuleQuery? = nil) {
        self.init(caller: caller, uid: uid, times: .renewable(times), query: query)
    }

    /// The token's issue time (s), for revocation checks.
    public var issuedAt: Int64? {
        switch times {
        case .fixed(let issuedAt, _): return issuedAt
        case .renewable(let times): return times.issuedAt
        }
    }

    /// Read by the hub for every event it hands this stream.
    public var expiresAt: Int64? {
        switch times {
        case .fixed(_, let expiresAt): return expiresAt
        case .renewable(let times): return times.expiresAt
        }
    }
}

/// The issue and expiry times of a wire session's credential, shared by the gates of its
/// listens. The SDKs send a fresh ID token of the same user before the old one expires
/// (`auth` again, docs/protocol/wire.md §4.7): the session renews these, and its open
/// listens then expire and are checked for revocation by the new token, not ended when the
/// first one lapses. Atomics, not a lock: the hub reads the expiry for every event it
/// delivers. The two are read independently; a reader between the two stores of a renewal
/// sees one old, one new.
public final class CredentialTimes: Sendable {
    /// Stands for nil (no time: an admin's or an emulator owner's credential).
    private static let none = Int64.min
    private let issued: Atomic<Int64>
    private let expires: Atomic<Int64>

    public init(issuedAt: Int64?, expiresAt: Int64?) {
        issued = Atomic(issuedAt ?? Self.none)
        expires = Atomic(expiresAt ?? Self.none)
    }

    public var issuedAt: Int64? { Self.optional(issued.load(ordering: .relaxed)) }
    public var expiresAt: Int64? { Self.optional(expires.load(ordering: .relaxed)) }

    public func renew(issuedAt: Int64?, expiresAt: Int64?) {
        issued.store(issuedAt ?? Self.none, ordering: .relaxed)
        expires.store(expiresAt ?? Self.none, ordering: .relaxed)
    }

    private static func optional(_ raw: Int64) -> Int64? { raw == none ? nil : raw }
}
