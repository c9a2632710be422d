#if canImport(Glibc)
import Glibc
#endif

/// Where and how an `HTTPServer` listens.
public struct HTTPServerConfiguration: Sendable {
    /// An IPv4 or IPv6 address literal ("127.0.0.1", "0.0.0.0", "::1", "::"); brackets
    /// around IPv6 ("[::1]") are accepted. Host names are not resolved: binding should
    /// never depend on DNS. Default: loopback only (docs/design.md §1).
    public var host: String = "127.0.0.1"
    /// TCP port; 0 lets the kernel pick a free one (`start()` returns it).
    public var port: Int = 9000
    /// Serial I/O queues, one per core by default (docs/linux-notes.md pitfall 4).
    public var ioQueueCount: Int = HTTPServerConfiguration.defaultIOQueueCount
    public var limits: HTTPLimits = HTTPLimits()
    /// Peer addresses (exact literals) whose `X-Forwarded-For`, `X-Forwarded-Proto` and
    /// `X-Request-Id` are believed. Empty: none (docs/design.md §1, deny by default).
    public var trustedProxies: Set<String> = []
    /// Paths (exact, without the query) never refused by `maxConnectionsPerAddress`: health
    /// checks, which a load balancer must get through even when the address it shares with
    /// clients (a NAT, a proxy without `trustedProxies`) has all its connections. Past the cap
    /// an address may open `HTTPLimits.uncappedConnectionsPerAddress` more connections, each
    /// serving one request for one of these paths (any other gets 429), then closing.
    public var uncappedPaths: Set<String> = []
    /// The ledger of unsent response bytes, when the application holds answers for clients
    /// outside connections too and counts them there (`UnsentBytes`); its `limit` is the
    /// bound then. Nil: the server's own, bounded by `limits.maxUnsentBytes`.
    public var unsentBytes: UnsentBytes?
    /// Called once per answered request (and once per stream, when it closes), on an I/O
    /// queue: must not block.
    public var accessLog: (@Sendable (HTTPAccessRecord) -> Void)?
    /// Called on an I/O queue with the size of each unit of at least `largeStreamUnitBytes`
    /// queued on an open stream (an event, a WebSocket message): by then the application
    /// has usually freed the value it encoded, and can give memory back. A stream's exchange
    /// ends only when it closes, which `accessLog` reports too late for that. Must not block.
    public var largeStreamUnit: (@Sendable (Int) -> Void)?
    /// The smallest unit `largeStreamUnit` hears of (1 MiB): pushes of ordinary size cost
    /// the fan-out one comparison each.
    public static let largeStreamUnitBytes = 1 << 20
    /// A fan-out's sends (one push to many streams or sessions) are handed to the kernel a
    /// ring at a time through io_uring where the kernel allows it (`HTTPServer.sendRingError`
    /// says why not otherwise); false: one `send()` per connection.
    public var batchedSends = true

    public static var defaultIOQueueCount: Int { max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))) }

    public init(host: String = "127.0.0.1", port: Int = 9000, ioQueueCount: Int? = nil, limits: HTTPLimits = HTTPLimits()) {
        self.host = host
        self.port = port
        self.ioQueueCount = ioQueueCount ?? HTTPServerConfiguration.defaultIOQueueCount
        self.limits = limits
    }
}
