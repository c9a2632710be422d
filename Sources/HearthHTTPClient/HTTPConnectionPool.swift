import HearthSystem
import Synchronization

/// Connections an `HTTPClient` finished an exchange on, kept open for the next request to
/// the same origin (scheme, host, port, trusted authorities and timeout), so a stream of
/// requests to one receiver does not pay a TCP connect (and a TLS handshake) and a close
/// each. Owned by whoever sends the stream (a trigger's deliverer), never shared globally.
///
/// A connection is put back only after a complete answer that leaves it reusable
/// (`HTTPClient` decides), and is taken newest first. A connection idle longer than
/// `maxIdleMilliseconds`, or one with anything to read while idle (the server closed it,
/// or sent bytes nobody asked for), is closed instead of used. At most `maxIdle` wait; past
/// it the one idle longest is closed. `prune()` closes the expired ones (the owner calls it
/// from its own loop), `closeAll()` the rest.
public final class HTTPConnectionPool: Sendable {
    /// Idle connections kept at most, all origins together. A trigger attempts at most 64
    /// events at once (`maxConcurrency`), each on its own connection.
    public static let defaultMaxIdle = 64
    /// How long an idle connection is kept. Shorter than the keep-alive of common servers
    /// (gunicorn 2 s, Node.js 5 s), so the server rarely closes a connection first.
    public static let defaultMaxIdleMilliseconds: Int64 = 1_000

    struct Origin: Hashable {
        var isTLS: Bool
        var host: String
        var port: Int
        var caFile: String?
        var timeoutSeconds: Int
    }

    /// An idle connection with the time it was put back. `@unchecked Sendable`: the
    /// connection is touched only by the one exchange that holds it; while idle, only
    /// under the pool's lock, which hands it to at most one taker.
    final class Idle: @unchecked Sendable {
        let connection: OutgoingConnection
        let origin: Origin
        let since: Int64

        init(_ connection: OutgoingConnection, origin: Origin, since: Int64) {
            (self.connection, self.origin, self.since) = (connection, origin, since)
        }
    }

    public let maxIdle: Int
    public let maxIdleMilliseconds: Int64
    private let clock: @Sendable () -> Int64
    /// Oldest first.
    private let idle = Mutex<[Idle]>([])
    private let tally = Mutex(Counts())

    /// What the pool did, for tests and metrics.
    public struct Counts: Sendable, Equatable {
        /// Connections taken for an exchange.
        public var reused = 0
        /// Connections closed instead of used: expired, readable while idle, past `maxIdle`.
        public var discarded = 0
    }

    /// `clock`: monotonic milliseconds (tests pass their own).
    public init(maxIdle: Int = HTTPConnectionPool.defaultMaxIdle,
                maxIdleMilliseconds: Int64 = HTTPConnectionPool.defaultMaxIdleMilliseconds,
                clock: @escaping @Sendable () -> Int64 = { Int64(Syscall.monotonicSeconds() * 1000) }) {
        self.maxIdle = max(0, maxIdle)
        self.maxIdleMilliseconds = maxIdleMilliseconds
        self.clock = clock
    }

    deinit { closeAll() }

    public var idleCount: Int { idle.withLock { $0.count } }
    public var counts: Counts { tally.withLock { $0 } }

    /// The newest idle connection to `origin` that is still usable, or nil.
    func take(_ origin: Origin) -> OutgoingConnection? {
        let now = clock()
        var closing: [Idle] = []
        defer { discard(closing) }
        while true {
            let found: Idle? = idle.withLock { idle in
                guard let index = idle.lastIndex(where: { $0.origin == origin }) else { return nil }
                return idle.remove(at: index)
            }
            guard let found else { return nil }
            if now - found.since > maxIdleMilliseconds || Self.readable(found.connection) {
                closing.append(found)
                continue
            }
            tally.withLock { $0.reused += 1 }
            return found.connection
        }
    }

    /// Puts `connection` back after a complete exchange that left it reusable.
    func give(_ connection: OutgoingConnection, origin: Origin) {
        let entry = Idle(connection, origin: origin, since: clock())
        let evicted: [Idle] = idle.withLock { idle in
            idle.append(entry)
            let over = idle.count - maxIdle
            guard over > 0 else { return [] }
            defer { idle.removeFirst(over) }
            return Array(idle.prefix(over))
        }
        discard(evicted)
    }

    /// Closes the connections idle longer than `maxIdleMilliseconds`.
    public func prune() {
        let now = clock()
        let expired: [Idle] = idle.withLock { idle in
            guard idle.contains(where: { now - $0.since > maxIdleMilliseconds }) else { return [] }
            let expired = idle.filter { now - $0.since > maxIdleMilliseconds }
            idle.removeAll { now - $0.since > maxIdleMilliseconds }
            return expired
        }
        discard(expired)
    }

    /// Closes every idle connection.
    public func closeAll() {
        discard(idle.withLock { idle in defer { idle = [] }; return idle })
    }

    private func discard(_ entries: [Idle]) {
        guard !entries.isEmpty else { return }
        tally.withLock { $0.discarded += entries.count }
        for entry in entries { entry.connection.close() }
    }

    /// An idle connection with something to read (an end of stream, a reset, bytes, on the
    /// socket or already inside TLS) is not fit for a new request: the server closed it, or
    /// its answer framing cannot be trusted.
    private static func readable(_ connection: OutgoingConnection) -> Bool {
        connection.hasBufferedInput || ((try? Syscall.waitReadable(connection.fd, timeoutMilliseconds: 0)) ?? true)
    }
}
