#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import HearthSystem

/// One accepted TCP connection: reads when its loop's epoll says so, parses, hands requests
/// to the handler strictly one at a time, writes responses in order (RFC 9112 §9.3.2:
/// pipelined requests are answered in the order received), and closes per its lifecycle.
///
/// This file is the connection's core, whatever it carries: the socket and its readiness
/// in the loop's epoll set (`IOLoop.Poller`; HTTPConnection+Readiness.swift), the output
/// buffer, the timeouts (`ConnectionLifecycle`), the lingering close and shutdown, and the
/// accounting of its address, unsent output and incomplete input. What it carries is its `mode`, one small state type per protocol, swapped on
/// upgrade as swift-nio swaps handlers (docs/http-connection.md):
/// - `HTTPExchange` (HTTPConnection+Exchange.swift): HTTP/1.1 requests and responses;
/// - `OpenStream` (HTTPConnection+Stream.swift): an open-ended body (server-sent events);
/// - `WebSocketChannel` (HTTPConnection+WebSocket.swift): a WebSocket session, whose
///   output is an `OpenStream` too.
///
/// `@unchecked Sendable`: all mutable state, the mode's included, is confined to
/// `loop.queue`. The responder closures that may run on other threads only capture `self`
/// to hop back onto that queue.
///
/// Readiness is one-shot (`EPOLLONESHOT`): each event disarms the descriptor, and `ready`
/// arms it again with what the connection wants then (`arm`): reading unless paused
/// (end of stream, or a pipelining client's read-ahead), writing only while output waits
/// on a full socket. The descriptor leaves the epoll set when the connection closes, and
/// is closed in a block run after the current one (`finishClose`), as the cancel handler
/// of the Dispatch sources used before did: events already taken find the connection
/// closed and do nothing.
final class HTTPConnection: @unchecked Sendable {
    /// What the connection carries; changes only from `exchange` to a stream (the answer
    /// to the request being handled), and to `closed` once the fd is closed.
    enum Mode {
        case exchange(HTTPExchange)
        case events(OpenStream)
        case webSocket(WebSocketChannel)
        case closed

        var isStream: Bool {
            switch self {
            case .events, .webSocket: return true
            case .exchange, .closed: return false
            }
        }
    }

    /// Unparsed input that may wait while a request is being handled before we stop
    /// reading (backpressure on pipelining clients).
    static let readAheadLimit = 64 * 1024
    /// Output capacity kept after a drain, so keep-alive responses reuse their buffer. An
    /// open stream (SSE or WebSocket) keeps none: it idles with its output drained, most
    /// of its life, and a kept buffer would cost that much per idle stream (measured: ~460
    /// bytes per idle wire connection); a new buffer per event costs one allocation.
    static let keptOutputCapacity = 64 * 1024

    let fd: Int32
    let remoteAddress: String
    let loop: IOLoop
    let context: Context

    var mode: Mode
    var lifecycle: ConnectionLifecycle
    /// The connection's key in its loop (`IOLoop.register`) and in the loop's epoll set.
    var token: UInt64 = 0
    /// Reading is paused (`updateReadInterest`).
    var readSuspended = false
    /// Output waits for the socket to take more (`armWrite`).
    var writeWanted = false
    /// The events the descriptor is armed for in the epoll set; nil once an event fired
    /// and disarmed it (`ready`), until `arm`.
    var armedEvents: UInt32?

    var output: [UInt8] = []
    var outputOffset = 0
    /// What this connection has added to `ServerCounters.unsent` (`accountUnsent`).
    private var accountedUnsent = 0
    /// What this connection has counted in `Context.incomplete` (`accountIncomplete`), and
    /// under which address (kept while anything is counted, so it is released where it was
    /// added even if the forwarded client changes).
    private var accountedIncomplete = 0
    private(set) var incompleteAddress = ""
    /// The client address this connection is counted under in `Context.addresses`: the
    /// peer (counted by the listener at accept), or behind a trusted proxy the forwarded
    /// client of the current request; nil when not counted.
    var countedAddress: String?
    /// Set when this connection came in past its address's `maxConnectionsPerAddress`, on
    /// the reserve for health checks (`HTTPLimits.uncappedConnectionsPerAddress`), counted
    /// there under `remoteAddress`. A flag, not the address again: it is in every connection.
    private(set) var onReserve: Bool

    /// The final response is queued; close once it is written.
    var closeAfterFlush = false
    private var lingering = false
    private var lingerBytes = 0
    private(set) var peerClosed = false
    private(set) var shuttingDown = false
    private(set) var pumping = false
    /// Stream output queued during the loop's running batch waits for its end (`IOLoop.post`).
    var writeIsDeferred = false
    /// A send of this connection's is in its loop's ring (`IOLoop.queueRingSend`): nothing
    /// else is written to the socket before its result is handled.
    var ringPending = false
    /// That send's result, once the ring reported it and until it is handled
    /// (`finishRingSend`).
    var ringResult: Int32?
    private(set) var closed = false

    init(fd: Int32, remoteAddress: String, loop: IOLoop, context: Context, countedAddress: String? = nil,
         onReserve: Bool = false) {
        self.fd = fd
        self.remoteAddress = remoteAddress
        self.countedAddress = countedAddress
        self.onReserve = onReserve
        self.loop = loop
        self.context = context
        self.mode = .exchange(HTTPExchange(limits: context.limits))
        self.lifecycle = ConnectionLifecycle(limits: context.limits, now: context.clock())
        context.counters.liveConnectionObjects.wrappingAdd(1, ordering: .relaxed)
    }

    deinit {
        context.counters.liveConnectionObjects.wrappingSubtract(1, ordering: .relaxed)
    }

    /// The open-ended body the connection carries (server-sent events, or a WebSocket's
    /// output), if it was upgraded.
    var stream: OpenStream? {
        switch mode {
        case .events(let stream): return stream
        case .webSocket(let channel): return channel.stream
        case .exchange, .closed: return nil
        }
    }

    // MARK: Reading

    func readable() {
        if closed { return }
        let buffer = loop.readBuffer
        reads: for _ in 0..<4 {
            let result: IOResult<Int>
            do {
                result = try Syscall.receive(fd, into: buffer)
            } catch {
                close()  // ECONNRESET and friends: nothing more can be said.
                return
            }
            guard case .done(let count) = result else { break }
            if count == 0 {
                peerClosed = true
                break
            }
            let bytes = UnsafeRawBufferPointer(rebasing: buffer[0..<count])
            if lingering {
                lingerBytes += count
                if lingerBytes > HTTPLimits.lingerMaxBytes {
                    close()
                    return
                }
            } else {
                switch mode {
                case .exchange(let exchange):
                    exchange.parser.feed(bytes)
                case .webSocket(let channel):
                    webSocketReceived(channel, bytes)
                    if closed { return }
                    // The application asked to stop (`WebSocketSession.waiting`): the rest
                    // stays in the socket.
                    if channel.readPaused { break reads }
                case .events, .closed:
                    break  // A stream's client has nothing more to say; its bytes are dropped unread.
                }
            }
            if count < buffer.count { break }
        }
        if lingering {
            if peerClosed { close() }
            return
        }
        pump()
        accountIncomplete()
    }

    /// Reads only while it is useful: not after end of stream (a level-triggered source
    /// would fire forever), not while a pipelining client has more than
    /// `readAheadLimit` bytes waiting behind the request being handled, and not while a
    /// WebSocket's application is behind (`WebSocketSession.waiting`).
    func updateReadInterest() {
        guard !closed else { return }
        var wanted = !peerClosed
        if wanted, !lingering {
            switch mode {
            case .exchange(let exchange): wanted = exchange.parser.bufferedByteCount < Self.readAheadLimit
            case .webSocket(let channel): wanted = !channel.readPaused || channel.state.closeSent
            case .events, .closed: break
            }
        }
        if wanted == readSuspended {
            readSuspended = !wanted
            arm()
        }
    }

    // MARK: Moving forward

    /// Moves the connection forward as far as it can: queue a delivered answer, write,
    /// then (HTTP/1.1) take the next request once everything before it is written.
    func pump() {
        assert(loop.isCurrent, "HTTPConnection used off its I/O queue")
        if pumping || closed { return }
        pumping = true
        defer { pumping = false }
        while !closed {
            if case .exchange(let exchange) = mode, let answer = exchange.takeAnswer() {
                begin(answer, in: exchange)
            }
            // Output the loop's ring wrote to the end (`wroteThroughRing`) is still to be
            // cleared as drained: `flush` does that without a send.
            if !output.isEmpty && !flush() { break }
            guard case .exchange(let exchange) = mode else {
                // An open stream: nothing more to parse.
                if closeAfterFlush {
                    startLingering()
                } else if peerClosed {
                    close()
                }
                break
            }
            if closeAfterFlush {
                startLingering()
                break
            }
            if !nextRequest(in: exchange) { break }
        }
        accountUnsent()
        updateReadInterest()
    }

    /// Brings `ServerCounters.unsent` up to date with this connection's output: the
    /// whole buffer while any of it is unsent, since the written part is only released
    /// when it is drained (counting only the unsent tail let RSS reach ~7× the bound with
    /// 1,000 readers that stopped reading a 4.5 MB answer; docs/bench/history.md, "Unread responses").
    private func accountUnsent() {
        let waiting = closed || outputOffset == output.count ? 0 : output.count
        guard waiting != accountedUnsent else { return }
        context.counters.unsent.total.wrappingAdd(waiting - accountedUnsent, ordering: .relaxed)
        accountedUnsent = waiting
    }

    /// Brings `Context.incomplete` up to date with what this connection holds for input
    /// not complete yet, and refuses the connection when that passes a bound: the parser's
    /// unparsed bytes and partial body, or a WebSocket's partial frames and fragments plus
    /// what its application holds. Also times a WebSocket's partial message.
    func accountIncomplete() {
        var held = 0
        if !closed && !lingering && !closeAfterFlush {
            switch mode {
            case .exchange(let exchange): held = exchange.parser.heldByteCount + exchange.bodyBytesInFlight
            case .webSocket(let channel): held = channel.heldByteCount
            case .events, .closed: held = 0
            }
        }
        guard held != accountedIncomplete else { return }
        if accountedIncomplete == 0 { incompleteAddress = countedAddress ?? remoteAddress }
        let verdict = context.incomplete.account(incompleteAddress, from: accountedIncomplete, to: held)
        accountedIncomplete = held
        if case .webSocket(let channel) = mode { channel.state.holding(channel.partialByteCount, now: context.clock()) }
        guard verdict != .keep else { return }
        // A request being handled is not refused for what it reads meanwhile (no more
        // than the read-ahead): closing would lose its answer. Its body counts, so the
        // others of its address are refused instead.
        if case .exchange(let exchange) = mode, exchange.owesAnswer { return }
        // Past `maxIncompleteBytes` (server) or `maxIncompleteBytesPerAddress`: what the
        // input held is dropped at once and the refusal logged (only a growing count is
        // refused, so never on an open event stream, which holds nothing).
        context.counters.incompleteRefusals.wrappingAdd(1, ordering: .relaxed)
        let serverFull = verdict == .serverFull
        let reason = serverFull ? Self.serverFullReason : Self.addressFullReason
        switch mode {
        case .webSocket(let channel): refuseIncomplete(channel, serverFull: serverFull, reason: reason)
        case .exchange(let exchange): refuseIncomplete(exchange, reason: reason)
        case .events, .closed: break
        }
    }

    static let serverFullReason = "Server holds too much incomplete input; try again later"
    static let addressFullReason = "Too much incomplete input from your address; finish or close other messages first"

    // MARK: Writing

    /// Writes as much output as the socket takes. Returns true when all of it is written.
    private func flush() -> Bool {
        while outputOffset < output.count {
            let result: IOResult<Int>
            do {
                result = try output.withUnsafeBytes { bytes throws(SystemError) in
                    try Syscall.send(fd, UnsafeRawBufferPointer(rebasing: bytes[outputOffset...]))
                }
            } catch {
                close()  // EPIPE, ECONNRESET: the peer is gone.
                return false
            }
            switch result {
            case .done(let count):
                if mode.isStream { context.counters.streamWrites.wrappingAdd(1, ordering: .relaxed) }
                outputOffset += count
                if outputOffset < output.count { lifecycle.wrote(now: context.clock()) }
            case .wouldBlock:
                armWrite()
                return false
            }
        }
        // Keep a small buffer for the next response, but not what a large one grew, and
        // nothing on an open stream (see `keptOutputCapacity`).
        if mode.isStream {
            output = []
            stream?.resetUnits()
        } else if output.capacity > Self.keptOutputCapacity {
            output = []
        } else {
            output.removeAll(keepingCapacity: true)
        }
        outputOffset = 0
        // Disarmed lazily: an armed write event that still fires finds nothing wanted.
        writeWanted = false
        lifecycle.outputDrained(now: context.clock())
        return true
    }

    /// One send of `bytes` on a drained open stream: the count the socket took, or nil when
    /// the peer is gone (the connection is closed then).
    func sendNow(_ bytes: [UInt8]) -> Int? {
        let result: IOResult<Int>
        do {
            result = try bytes.withUnsafeBytes { raw throws(SystemError) in try Syscall.send(fd, raw) }
        } catch {
            close()  // EPIPE, ECONNRESET: the peer is gone.
            return nil
        }
        guard case .done(let count) = result else { return 0 }
        context.counters.streamWrites.wrappingAdd(1, ordering: .relaxed)
        return count
    }

    func writable() {
        if closed { return }
        pump()
    }

    /// Writes the access-log record of `request` (the one being answered; nil once logged).
    func logAccess(_ request: CurrentRequest?, status: Int, bytes: Int, isStream: Bool, received: Int = 0) {
        guard let request, let accessLog = context.accessLog else { return }
        accessLog(HTTPAccessRecord(
            method: request.method, path: request.path, status: status, bytes: bytes,
            durationNanoseconds: context.clock() &- request.start, requestID: request.requestID,
            client: request.client, peer: remoteAddress, isStream: isStream, requestBytes: request.bodyBytes + received,
            tag: request.tag))
    }

    // MARK: Closing

    /// After the final response: half-close and drain what the peer still sends, so the
    /// response is not lost to a reset caused by unread input (RFC 9112 §9.6).
    private func startLingering() {
        if lingering { return }
        lingering = true
        endStream()
        try? Syscall.shutdown(fd, Int32(SHUT_WR))
        lifecycle.lingerStarted(now: context.clock())
        if peerClosed { close() }
    }

    /// Graceful shutdown of the server: close now if idle, else after the current response.
    func beginShutdown() {
        shuttingDown = true
        if closed { return }
        switch mode {
        case .webSocket:
            webSocketClose(.goingAway, reason: "Server shutting down")
        case .events:
            // A stream never becomes idle: end it after what is queued.
            closeAfterFlush = true
            pump()
        case .exchange(let exchange):
            if !exchange.owesAnswer && outputOffset == output.count
                && lifecycle.isIdle(parserPhase: exchange.parser.phase) {
                close()
            }
        case .closed:
            break
        }
    }

    /// Called by the loop's periodic sweep.
    func checkTimeouts(now: Nanoseconds) {
        if closed { return }
        if case .webSocket(let channel) = mode {
            webSocketTick(channel, now: now)
            if closed { return }
        }
        switch lifecycle.check(now: now) {
        case .none:
            return
        case .close:
            close()
        case .respondTimeoutAndClose:
            guard case .exchange(let exchange) = mode, !exchange.inFlight, !closeAfterFlush else {
                close()
                return
            }
            respondFinally(status: 408, minorVersion: 1, in: exchange)
            pump()
        }
    }

    /// Leaves the epoll set now; the fd is closed in a later block (`finishClose`).
    func close() {
        assert(loop.isCurrent, "HTTPConnection used off its I/O queue")
        if closed { return }
        // The kernel may still use the descriptor for a send in the loop's ring: it goes
        // first, so the number is never closed (and given to a new connection) under it.
        if ringPending { loop.settleRingSend(self) }
        if closed { return }
        if writeIsDeferred {
            // What earlier posted work queued still goes out first, as it would have
            // without the batch, as far as the socket takes it.
            writeIsDeferred = false
            if outputOffset < output.count { _ = flush() }
            if closed { return }
        }
        closed = true
        lifecycle.closed()
        if token != 0 { loop.poller.forget(fd) }
        loop.queue.async { self.finishClose() }
    }

    /// Closes the descriptor and lets go of everything the connection held (on
    /// `loop.queue`, after the block that closed it).
    private func finishClose() {
        do {
            try Syscall.close(fd)
        } catch {
            context.log("HTTP connection: \(error)")
        }
        output = []
        outputOffset = 0
        accountUnsent()
        accountIncomplete()
        if let address = countedAddress {
            context.addresses.release(address)
            countedAddress = nil
        }
        if onReserve {
            context.reserve.release(remoteAddress)
            onReserve = false
        }
        loop.unregister(self)
        endStream()
        mode = .closed  // the mode's buffers and callbacks go now
        context.onClose()
    }
}

/// The request being answered, for the access log. Out of line: an idle connection (or an
/// upgraded one, all its life) holds one reference rather than ~90 bytes of strings and
/// numbers.
final class CurrentRequest {
    let method: String, path: String, requestID: String, client: String
    let start: Nanoseconds, bodyBytes: Int
    /// The answer's `accessTag`, set when the answer is queued.
    var tag: String?
    init(method: String, path: String, requestID: String, client: String, start: Nanoseconds, bodyBytes: Int) {
        (self.method, self.path, self.requestID, self.client, self.start, self.bodyBytes) =
            (method, path, requestID, client, start, bodyBytes)
    }
}
