import Dispatch
import HearthHTTP
import HearthJSON
import HearthStreams
import HearthWire
import Logging
import Synchronization

/// Named bounds of one wire-protocol connection (every limit named and tested;
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
    static let defaultMaxOnDisconnect = 100
    /// Bytes of onDisconnect operations (their stored JSON) queued on one connection; past
    /// it `o`/`om` are answered `too_many_ondisconnect`. Presence needs a few hundred bytes.
    static let defaultMaxOnDisconnectBytes = 1024 * 1024
    /// The same over all the connections of one client address (every namespace), so one
    /// address cannot take the server's whole `maxOnDisconnectBytesInAll`.
    static let defaultMaxOnDisconnectBytesPerAddress = 16 * 1024 * 1024
    /// The same over every connection of the server.
    static let defaultMaxOnDisconnectBytesInAll = 256 * 1024 * 1024
    /// Requests waiting behind the one being handled. Past it a WebSocket stops reading
    /// until the session catches up, as past `maxWaitingRequestBytes`: an SDK that
    /// reconnects re-sends every write it has not seen answered, thousands after a long
    /// time offline, and closing it for that would have it reconnect and re-send them
    /// forever. A long poll, which cannot stop reading, is closed past it (1008).
    static let defaultMaxPendingRequests = 1_000
    /// Bytes of requests received whole and waiting behind the one being handled (a client
    /// sending faster than the database takes its writes); past it a WebSocket stops
    /// reading until they are handled: TCP holds the client back and nothing is lost. The
    /// waiting requests, and the running one when large, also count against the server's
    /// bounds on input not yet answered (`HTTPLimits.maxIncompleteBytes` and its
    /// address's share). A long poll, which cannot stop reading, ends past its
    /// `LongPollLimits.maxPendingBytes` instead.
    static let defaultMaxWaitingRequestBytes = 1024 * 1024
    /// Failed `auth`/`gauth` attempts on one connection; past it the connection is closed
    /// with 1008.
    static let defaultMaxAuthFailures = 10
    /// Malformed messages or unknown actions on one connection; past it the connection is
    /// closed with 1008.
    static let defaultMaxBadMessages = 20

    public var maxListens = defaultMaxListens
    public var maxOnDisconnect = defaultMaxOnDisconnect
    public var maxOnDisconnectBytes = defaultMaxOnDisconnectBytes
    public var maxOnDisconnectBytesPerAddress = defaultMaxOnDisconnectBytesPerAddress
    public var maxOnDisconnectBytesInAll = defaultMaxOnDisconnectBytesInAll
    public var maxPendingRequests = defaultMaxPendingRequests
    public var maxWaitingRequestBytes = defaultMaxWaitingRequestBytes
    public var maxAuthFailures = defaultMaxAuthFailures
    public var maxBadMessages = defaultMaxBadMessages
    var frames = WireLimits()
    /// Bounds of the long-poll transport (`/.lp`).
    public var longPoll = LongPollLimits()

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
    /// onDisconnect records (the store). Never a session's queue, which is its connection's
    /// I/O queue.
    let work: DispatchQueue
    let clock: @Sendable () -> Int64
    let logger: Logger
    let limits: WireSessionLimits
    /// Namespaces served (`ns`); empty: any.
    let namespaces: Set<String>
    /// Where onDisconnect operations are kept and run.
    let onDisconnect: OnDisconnectLedger
    /// Open sessions by id, for a reconnecting client's `ls` (docs/protocol/wire.md §4.5),
    /// and for closing them all when the node lost its lease.
    let sessions: WireSessionRegistry
    /// Open long-poll transports by id (`/.lp`): one registry for every namespace, so the
    /// session bound holds server-wide and shutdown ends them all.
    let longPolls: LongPollRegistry
    /// Why requests were answered `unavailable` for an unavailable store, for the operator.
    let unavailable: UnavailableLog

    init(database: Database, hub: StreamHub, authenticator: Authenticator, work: DispatchQueue,
         clock: @escaping @Sendable () -> Int64, logger: Logger, limits: WireSessionLimits = WireSessionLimits(),
         namespaces: Set<String> = [], onDisconnect: OnDisconnectLedger, sessions: WireSessionRegistry = WireSessionRegistry(),
         longPolls: LongPollRegistry? = nil, unsent: UnsentBytes = UnsentBytes()) {
        self.sessions = sessions
        self.longPolls = longPolls ?? LongPollRegistry(limits: limits.longPoll, unsent: unsent)
        self.database = database
        self.hub = hub
        self.authenticator = authenticator
        self.work = work
        self.clock = clock
        self.logger = logger
        self.unavailable = UnavailableLog(logger: logger)
        self.limits = limits
        self.namespaces = namespaces
        self.onDisconnect = onDisconnect
    }
}

/// The open sessions of this server by session id (`s` of their handshake), so that a
/// client reconnecting with `ls=<old id>` can end its old session at once
/// (docs/protocol/wire.md §4.5, §6.3).
final class WireSessionRegistry: Sendable {
    private let open = Mutex<[WireSessionID: WireSession]>([:])
    /// What every session's queued onDisconnect operations hold, by address and in all.
    let onDisconnectBudget: OnDisconnectBudget

    init(onDisconnectBudget: OnDisconnectBudget = OnDisconnectBudget()) {
        self.onDisconnectBudget = onDisconnectBudget
    }

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
