/// An incremental HTTP/1.1 request parser (RFC 9112): fed byte chunks of any size, it
/// yields complete requests, `100-continue` notices and typed errors. It knows nothing of
/// sockets or time, so it is tested from byte literals and fuzzed directly.
///
/// Choices where the RFC leaves room, all on the strict side because Hearth may sit
/// behind a proxy that must frame messages exactly as we do (request smuggling):
/// - Lines must end in CRLF. A bare LF (which RFC 9112 §2.2 says a recipient MAY accept)
///   and a bare CR are refused with 400.
/// - Empty lines before a request line are skipped (RFC 9112 §2.2 SHOULD).
/// - Obsolete line folding is refused (RFC 9112 §5.2), as is whitespace before a colon.
/// - Content-Length together with Transfer-Encoding is refused (RFC 9112 §6.3 item 3);
///   identical repeated Content-Length values are accepted, differing ones refused (§6.3
///   item 5). Transfer-Encoding in HTTP/1.0 is refused (§6.1).
/// - The only transfer coding is `chunked`, exactly once; others get 501 (§6.1).
/// - Chunk extensions are ignored and trailer fields skipped (§7.1.1, §7.1.2); trailers
///   count against `maxHeaderBytes` and `maxHeaderCount`.
/// - HTTP/1.2…1.9 are served as HTTP/1.1 (RFC 9110 §6.2); other majors get 505.
/// - Field values are decoded as UTF-8; invalid sequences (obs-text) become U+FFFD.
///
/// After an error the parser stays failed: the connection answers and closes, because the
/// framing of anything after a malformed request cannot be trusted.
public struct HTTPRequestParser: Sendable {
    /// What the parser found in the bytes fed so far.
    public enum Event: Sendable {
        /// A complete request (body de-chunked). `keepAlive` is false when the client asked
        /// to close (`Connection: close`, or HTTP/1.0 without `Connection: keep-alive`,
        /// RFC 9112 §9.3).
        case request(HTTPRequest, keepAlive: Bool)
        /// The current request carries `Expect: 100-continue` and a body, none of which has
        /// arrived: the client waits for `HTTP/1.1 100 Continue` before sending it
        /// (RFC 9110 §10.1.1). Reported once, after the head passed every check (so a 413
        /// is never preceded by a 100).
        case continueExpected
        /// The request is malformed or over a limit. Answer with `error.status`, then close.
        case error(HTTPParseError)
    }

    /// Where the parser is in the current message; drives the connection's timeouts.
    public enum Phase: Sendable, Equatable {
        /// No byte of a next request buffered.
        case betweenRequests
        /// Some of a request line or header section buffered.
        case head
        /// Head parsed, body incomplete.
        case body
        /// An error was reported; nothing more will be parsed.
        case failed
    }

    enum State {
        case head
        case contentBody(remaining: Int)
        case chunkSize
        case chunkData(remaining: Int)
        case chunkDataEnd
        case trailers(bytes: Int, count: Int)
        case failed
    }

    /// Longest chunk-size line (size plus extensions) we read before calling it malformed.
    static let maxChunkLineBytes = 4096

    /// The four bounds the parser checks (not all of `HTTPLimits`: every connection holds
    /// a parser, so its size is per connection).
    struct Bounds {
        let maxRequestLineBytes: Int
        let maxHeaderBytes: Int
        let maxHeaderCount: Int
        let maxBodyBytes: Int
    }

    let limits: Bounds
    var buffer: [UInt8] = []
    /// Index of the first unconsumed byte in `buffer`.
    var start = 0
    var state: State = .head
    var head = HeadScan()
    /// The request whose body is being read, kept out of line: between requests (most of
    /// a keep-alive connection's life, and all of an upgraded one's) the parser then
    /// carries one reference, not a whole request (~150 bytes per idle connection).
    private var pendingBox: PendingRequest.Box?
    var pending: PendingRequest? {
        get { pendingBox?.value }
        _modify {
            // Moved out of the box first, so its body is uniquely referenced and grows in place.
            var value = pendingBox?.value
            pendingBox = nil
            defer { pendingBox = value.map(PendingRequest.Box.init) }
            yield &value
        }
    }

    public init(limits: HTTPLimits = HTTPLimits()) {
        self.limits = Bounds(maxRequestLineBytes: limits.maxRequestLineBytes, maxHeaderBytes: limits.maxHeaderBytes,
                             maxHeaderCount: limits.maxHeaderCount, maxBodyBytes: limits.maxBodyBytes)
    }

    /// Bytes received and not yet consumed by a reported event.
    public var bufferedByteCount: Int { buffer.count - start }

    /// Memory held for a request not complete yet, as allocated (the receive buffer's and
    /// the partial body's capacity): what `HTTPLimits.maxIncompleteBytes` counts. 0 when
    /// nothing is pending.
    public var heldByteCount: Int {
        let body = pendingBox?.value.request.body.capacity ?? 0  // read in place, not through a copy
        return bufferedByteCount == 0 && body == 0 ? 0 : buffer.capacity + body
    }

    /// Hands out (and forgets) the bytes received after the last reported request: after
    /// an upgrade they belong to the new protocol.
    mutating func takeBufferedBytes() -> [UInt8] {
        defer {
            buffer = []
            start = 0
        }
        return Array(buffer[start...])
    }

    /// Body bytes (de-chunked) of the request being read so far; 0 outside a body.
    public var bodyProgress: Int { pending?.request.body.count ?? 0 }

    public var phase: Phase {
        switch state {
        case .head: return bufferedByteCount == 0 ? .betweenRequests : .head
        case .failed: return .failed
        default: return .body
        }
    }

    /// Appends received bytes. Call `next()` until it returns nil afterwards.
    public mutating func feed(_ bytes: UnsafeRawBufferPointer) {
        if case .failed = state { return }
        compact()
        buffer.append(contentsOf: bytes.bindMemory(to: UInt8.self))
    }

    public mutating func feed<Bytes: Sequence>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        if case .failed = state { return }
        compact()
        buffer.append(contentsOf: bytes)
    }

    /// The next event, or nil when more bytes are needed (or after an error was reported).
    public mutating func next() -> Event? {
        while true {
            switch state {
            case .failed:
                return nil
            case .head:
                switch parseHead() {
                case .needMore:
                    return nil
                case .failure(let error):
                    return fail(error)
                case .complete:
                    if let finished = finishIfNoBody() { return finished }
                    if pending?.expectContinue == true && bufferedByteCount == 0 {
                        pending?.expectContinue = false
                        return .continueExpected
                    }
                }
            case .contentBody(let remaining):
                let count = min(remaining, bufferedByteCount)
                if count == 0 { return nil }
                takeBody(count)
                if remaining - count > 0 {
                    state = .contentBody(remaining: remaining - count)
                    return nil
                }
                return complete()
            case .chunkSize, .chunkData, .chunkDataEnd, .trailers:
                switch parseChunked() {
                case .needMore: return nil
                case .failure(let error): return fail(error)
                case .complete: return complete()
                }
            }
        }
    }

    // MARK: Internals shared by the extensions

    enum Step {
        case needMore
        case complete
        case failure(HTTPParseError)
    }

    mutating func fail(_ error: HTTPParseError) -> Event {
        state = .failed
        pending = nil
        buffer = []
        start = 0
        return .error(error)
    }

    /// Moves `count` buffered bytes into the pending request's body.
    mutating func takeBody(_ count: Int) {
        pending!.body.append(contentsOf: buffer[start..<(start + count)])
        start += count
    }

    mutating func complete() -> Event {
        let finished = pending!
        pending = nil
        state = .head
        head = HeadScan()
        return .request(finished.request, keepAlive: finished.keepAlive)
    }

    private mutating func compact() {
        if start == 0 { return }
        if start == buffer.count {
            // Keep a modest buffer for the next request; drop a big one (a large pipelined
            // body) so an idle connection does not pin it.
            if buffer.capacity > 64 * 1024 { buffer = [] } else { buffer.removeAll(keepingCapacity: true) }
            start = 0
        } else if start >= 4096 {
            buffer.removeSubrange(0..<start)
            start = 0
        }
    }
}

/// A request whose head is parsed and whose body is being read.
struct PendingRequest: Sendable {
    final class Box: Sendable {
        let value: PendingRequest
        init(_ value: PendingRequest) { self.value = value }
    }

    var request: HTTPRequest
    var keepAlive: Bool
    var expectContinue: Bool
    var body: [UInt8] {
        get { request.body }
        _modify { yield &request.body }
    }
}
