/// Every bound the HTTP layer enforces (docs/design.md §7). Each limit has a test
/// that crosses it. Times are in seconds.
public struct HTTPLimits: Sendable, Equatable {
    /// Longest request line (method, target, version; CRLF excluded). Over → 414
    /// (RFC 9112 §3: a server that receives a request-target longer than it wishes to parse
    /// MUST respond with 414).
    public var maxRequestLineBytes: Int = HTTPLimits.defaultMaxRequestLineBytes
    /// Largest header section (every field line and its CRLF, after the request line).
    /// Over → 431 (RFC 6585 §5). Also bounds a chunked body's trailer section.
    public var maxHeaderBytes: Int = HTTPLimits.defaultMaxHeaderBytes
    /// Most header fields in one request (duplicates count). Over → 431.
    public var maxHeaderCount: Int = HTTPLimits.defaultMaxHeaderCount
    /// Largest request body, after de-chunking. A larger `Content-Length` is refused before
    /// any body byte is read (and before `100 Continue`); a chunked body is refused as soon
    /// as its running total passes the limit. Over → 413.
    public var maxBodyBytes: Int = HTTPLimits.defaultMaxBodyBytes
    /// Time from the first byte of a request (or from accept) until its header section is
    /// complete. Over → 408 and close: this is what stops slowloris clients.
    public var headerReadTimeout: Double = HTTPLimits.defaultHeaderReadTimeout
    /// Longest pause between two reads of a request body. Over → 408 and close. Measured as
    /// inactivity, not total time, so large uploads on slow links still succeed.
    public var bodyReadTimeout: Double = HTTPLimits.defaultBodyReadTimeout
    /// Slowest acceptable average rate of a request body, bytes per second, once
    /// `bodyReadTimeout` has passed since the body began: by `bodyReadTimeout + n / rate`
    /// seconds after its start, a body must have delivered `n` bytes. A client that trickles
    /// a byte every few seconds (which never trips the idle timeout) is answered 408 and
    /// closed; a 16 MiB upload on a 20 KB/s link still succeeds.
    public var minBodyBytesPerSecond: Int = HTTPLimits.defaultMinBodyBytesPerSecond
    /// Longest pause in writing a response to a peer that does not read. Over → close.
    public var writeTimeout: Double = HTTPLimits.defaultWriteTimeout
    /// How long a keep-alive connection may sit between requests. Over → closed silently
    /// (RFC 9112 §9.8 allows closing idle connections at any time).
    public var idleTimeout: Double = HTTPLimits.defaultIdleTimeout
    /// Open connections at most. Over: the new connection is accepted, answered 503 and
    /// closed at once, so clients learn why instead of waiting in the backlog.
    public var maxConnections: Int = HTTPLimits.defaultMaxConnections
    /// Open connections from one client address at most: the peer's address, or behind a
    /// trusted proxy the forwarded client's (counted from its first request on). Over: 429
    /// and close, so one client cannot take the whole `maxConnections`.
    public var maxConnectionsPerAddress: Int = HTTPLimits.defaultMaxConnectionsPerAddress
    /// Response bytes the server's buffers may hold for readers that have not taken all of
    /// them yet, all connections together: a buffer counts whole until it has drained
    /// (its written part is released only then), so this bounds memory, not just the
    /// unsent tail (what the kernel's socket buffers hold is not counted). A connection holds
    /// at most one response at a time (it reads no further request until its output has
    /// drained), so this bounds what clients that do not read can pin: at most this plus
    /// one response (a response is never refused when nothing else waits, so one larger
    /// than the bound can still be served). A response larger than `alwaysSentBytes` that
    /// would pass it is replaced by 503 with `Retry-After`, and a stream that is behind
    /// while the total is over it is ended as if it had overflowed. An application that
    /// holds answers outside connections counts them in the same ledger (`UnsentBytes`,
    /// `HTTPServerConfiguration.unsentBytes`; the long-poll sessions' waiting messages).
    public var maxUnsentBytes: Int = HTTPLimits.defaultMaxUnsentBytes
    /// Bytes held for requests and messages not answered yet, all connections together: a
    /// request head or body still arriving, a WebSocket message whose last fragment (FIN)
    /// has not come, a wire-protocol message whose chunks have not all come; and input
    /// received whole that is still being handled: a request's body until its answer is
    /// queued, whole messages a WebSocket's application holds (`WebSocketSession.waiting`).
    /// Counted after each read; a connection holding more than `alwaysHeldBytes` that would
    /// pass the bound is refused and closed, its bytes released at once: an HTTP request
    /// with 503 and `Retry-After`, a WebSocket with close 1013 (try again later). Without it
    /// 80 sockets each holding most of a 16 MiB message took RSS from 258 MB to 1.5 GB
    /// (docs/bench/history.md, "Incomplete messages"). A request being handled is never
    /// refused for what it reads meanwhile (closing would lose its answer); its body counts,
    /// so the next of its address is refused instead.
    public var maxIncompleteBytes: Int = HTTPLimits.defaultMaxIncompleteBytes
    /// The same bytes per client address (the forwarded client's behind a trusted proxy):
    /// past it a connection of that address holding more than `alwaysHeldBytes` is refused
    /// (HTTP 503 with `Retry-After`, WebSocket close 1008), so one client cannot take the whole
    /// `maxIncompleteBytes` from the others. Room for one largest message as allocated, so a
    /// client can always send one.
    public var maxIncompleteBytesPerAddress: Int = HTTPLimits.defaultMaxIncompleteBytesPerAddress

    public static let defaultMaxRequestLineBytes = 8 * 1024
    public static let defaultMaxHeaderBytes = 32 * 1024
    public static let defaultMaxHeaderCount = 100
    public static let defaultMaxBodyBytes = 16 * 1024 * 1024
    public static let defaultHeaderReadTimeout: Double = 10
    public static let defaultBodyReadTimeout: Double = 30
    public static let defaultWriteTimeout: Double = 30
    public static let defaultIdleTimeout: Double = 60
    public static let defaultMaxConnections = 16_000
    /// The default stream cap per address (1,000) plus room for ordinary requests.
    public static let defaultMaxConnectionsPerAddress = 1_200
    public static let defaultMaxUnsentBytes = 256 * 1024 * 1024
    public static let defaultMinBodyBytesPerSecond = 1024
    public static let defaultMaxIncompleteBytes = 256 * 1024 * 1024
    /// Three of the largest messages (`WebSocketLimits.defaultMaxMessageBytes`): what is
    /// counted is memory as allocated, and a 16 MiB frame's receive buffer may have grown to
    /// 32 MiB while it arrives, so one such message always fits with room to spare.
    public static let defaultMaxIncompleteBytesPerAddress = 48 * 1024 * 1024
    /// Incomplete input one connection may always hold, whatever the others hold: what it
    /// reads ahead anyway (`HTTPConnection.readAheadLimit`), so small requests and messages
    /// are served while large incomplete ones are refused.
    public static let alwaysHeldBytes = 64 * 1024
    /// Responses this small are always sent, whatever `maxUnsentBytes` says: health checks,
    /// errors and small reads keep working while large unread responses are refused.
    public static let alwaysSentBytes = 16 * 1024

    /// Connections one address past `maxConnectionsPerAddress` may still have open for
    /// `HTTPServerConfiguration.uncappedPaths` (health checks), each serving one such
    /// request and closing; past these, 429 at accept. Not configurable: it only keeps
    /// health checks answerable without giving a capped address more room.
    public static let uncappedConnectionsPerAddress = 8

    /// How long a closing connection keeps draining what the peer still sends after our
    /// final response (a "lingering close"), so our response is not destroyed by a TCP
    /// reset (RFC 9112 §9.6). Not configurable: it only bounds cleanup.
    static let lingerTimeout: Double = 2
    /// Bytes drained during a lingering close before giving up and closing.
    static let lingerMaxBytes = 256 * 1024

    public init() {}
}
