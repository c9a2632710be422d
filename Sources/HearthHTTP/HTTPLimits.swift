/// Every bound the HTTP layer enforces (DESIGN §7, STYLE habit 8). Each limit has a test
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
    /// Longest pause in writing a response to a peer that does not read. Over → close.
    public var writeTimeout: Double = HTTPLimits.defaultWriteTimeout
    /// How long a keep-alive connection may sit between requests. Over → closed silently
    /// (RFC 9112 §9.8 allows closing idle connections at any time).
    public var idleTimeout: Double = HTTPLimits.defaultIdleTimeout
    /// Open connections at most. Over: the new connection is accepted, answered 503 and
    /// closed at once, so clients learn why instead of waiting in the backlog.
    public var maxConnections: Int = HTTPLimits.defaultMaxConnections

    public static let defaultMaxRequestLineBytes = 8 * 1024
    public static let defaultMaxHeaderBytes = 32 * 1024
    public static let defaultMaxHeaderCount = 100
    public static let defaultMaxBodyBytes = 16 * 1024 * 1024
    public static let defaultHeaderReadTimeout: Double = 10
    public static let defaultBodyReadTimeout: Double = 30
    public static let defaultWriteTimeout: Double = 30
    public static let defaultIdleTimeout: Double = 60
    public static let defaultMaxConnections = 16_000

    /// How long a closing connection keeps draining what the peer still sends after our
    /// final response (a "lingering close"), so our response is not destroyed by a TCP
    /// reset (RFC 9112 §9.6). Not configurable: it only bounds cleanup.
    static let lingerTimeout: Double = 2
    /// Bytes drained during a lingering close before giving up and closing.
    static let lingerMaxBytes = 256 * 1024

    public init() {}
}
