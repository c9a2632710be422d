#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import HearthSystem

/// One accepted TCP connection: reads with a Dispatch read source, parses, hands requests
/// to the handler strictly one at a time, writes responses in order (RFC 9112 §9.3.2:
/// pipelined requests are answered in the order received), and closes per its lifecycle.
///
/// `@unchecked Sendable`: all mutable state is confined to `loop.queue`. The responder
/// closures that may run on other threads only capture `self` to hop back onto that queue.
///
/// Dispatch source rules followed here (LINUX-SWIFT-NOTES pitfall 5): the fd is closed
/// only in the last cancel handler, after both sources are cancelled; a suspended source
/// is resumed before it is cancelled; the source→handler→self cycle is broken in the
/// cancel handler; the write source is created only when a write would block, and
/// suspended again when the output is drained.
final class HTTPConnection: @unchecked Sendable {
    /// What every connection of one server shares: one object, referenced (not copied)
    /// by each connection, which keeps an idle connection small.
    final class Context: Sendable {
        let handler: any HTTPHandler
        let limits: HTTPLimits
        let counters: ServerCounters
        let clock: @Sendable () -> Nanoseconds
        let log: @Sendable (String) -> Void
        let trustedProxies: Set<String>
        let accessLog: (@Sendable (HTTPAccessRecord) -> Void)?
        let requestIDPrefix: String
        /// Connections per client address (`HTTPLimits.maxConnectionsPerAddress`).
        let addresses: AddressCounts
        /// Bytes held for incomplete input (`HTTPLimits.maxIncompleteBytes`).
        let incomplete: IncompleteBytes
        /// Connections past their address's cap, kept for health checks
        /// (`HTTPLimits.uncappedConnectionsPerAddress`), and the paths they may ask for.
        let reserve: AddressCounts
        let uncappedPaths: Set<String>
        /// Called once, after the fd is closed.
        let onClose: @Sendable () -> Void

        init(handler: any HTTPHandler, limits: HTTPLimits, counters: ServerCounters,
             clock: @escaping @Sendable () -> Nanoseconds, log: @escaping @Sendable (String) -> Void,
             trustedProxies: Set<String>, accessLog: (@Sendable (HTTPAccessRecord) -> Void)?,
             requestIDPrefix: String, addresses: AddressCounts, incomplete: IncompleteBytes,
             reserve: AddressCounts, uncappedPaths: Set<String>, onClose: @escaping @Sendable () -> Void) {
            self.incomplete = incomplete
            self.reserve = reserve
            self.uncappedPaths = uncappedPaths
            self.handler = handler
            self.limits = limits
            self.counters = counters
            self.clock = clock
            self.log = log
            self.trustedProxies = trustedProxies
            self.accessLog = accessLog
            self.requestIDPrefix = requestIDPrefix
            self.addresses = addresses
            self.onClose = onClose
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

    private var parser: HTTPRequestParser
    private var lifecycle: ConnectionLifecycle
    private var readSource: DispatchSourceRead?
    private var writeSource: DispatchSourceWrite?
    private var readSuspended = false
    private var writeSuspended = false
    private var liveSources = 0

    private var output: [UInt8] = []
    private var outputOffset = 0
    /// What this connection has added to `ServerCounters.unsentBytes` (`accountUnsent`).
    private var accountedUnsent = 0
    /// What this connection has counted in `Context.incomplete` (`accountIncomplete`), and
    /// under which address (kept while anything is counted, so it is released where it was
    /// added even if the forwarded client changes).
    private var accountedIncomplete = 0
    private var incompleteAddress = ""
    /// Bytes the WebSocket's application holds for a message it is joining
    /// (`WebSocketSession.holding`).
    private var applicationHeld = 0
    /// The client address this connection is counted under in `Context.addresses`: the
    /// peer (counted by the listener at accept), or behind a trusted proxy the forwarded
    /// client of the current request; nil when not counted.
    private var countedAddress: String?
    /// Set when this connection came in past its address's `maxConnectionsPerAddress`, on
    /// the reserve for health checks (`HTTPLimits.uncappedConnectionsPerAddress`), counted
    /// there under `remoteAddress`. A flag, not the address again: it is in every connection.
    private var onReserve: Bool

    /// The handler owes a response for request number `sequence`.
    private var inFlight = false
    private var sequence: UInt64 = 0
    private var pendingResponse: HTTPResponder.Answer? {
        get { pendingResponseBox?.answer }
        set { pendingResponseBox = newValue.map(AnswerBox.init) }
    }
    /// Out of line: an answer waits here only while earlier output drains; inline, its
    /// 72 bytes were part of every idle connection.
    private var pendingResponseBox: AnswerBox?

    private final class AnswerBox {
        let answer: HTTPResponder.Answer
        init(_ answer: HTTPResponder.Answer) { self.answer = answer }
    }
    private var currentIsHead = false
    private var currentKeepAlive = true
    private var currentMinorVersion = 1
    /// The request being answered, for the access log.
    private var current: CurrentRequest?

    /// Out of line: an idle connection (or an upgraded one, all its life) holds one
    /// reference rather than ~90 bytes of strings and numbers.
    private final class CurrentRequest {
        let method: String, path: String, requestID: String, client: String
        let start: Nanoseconds, bodyBytes: Int
        init(method: String, path: String, requestID: String, client: String, start: Nanoseconds, bodyBytes: Int) {
            (self.method, self.path, self.requestID, self.client, self.start, self.bodyBytes) =
                (method, path, requestID, client, start, bodyBytes)
        }
    }
    private var streamBytes = 0
    /// Bytes received over a WebSocket session (its access record's `requestBytes`).
    private var webSocketBytesReceived = 0

    /// The final response is queued; close once it is written.
    private var closeAfterFlush = false
    private var lingering = false
    private var lingerBytes = 0
    private var peerClosed = false
    private var shuttingDown = false
    private var pumping = false
    private(set) var closed = false

    /// Set once the handler answered with an open-ended body: from then on the connection
    /// only writes (`streamSend`) and watches for the peer's close.
    private var stream: HTTPStreamOptions?
    /// On a stream, where each queued unit (the head, then each event) ends in `output`,
    /// so an overflow can drop whole units that have not started and end on a boundary.
    /// Cleared whenever the output drains.
    private var streamUnitEnds: [Int] = []
    /// The stream's end was reported (`endStream`): its last bytes are out, or it closed.
    private var streamEnded = false
    /// Set once the connection was upgraded (`HTTPResponder.upgrade`): received bytes are
    /// frames for this state machine, and the output is the stream's (above), bounded by
    /// `WebSocketLimits.maxBufferedBytes`, ended with a close frame 1008 on overflow.
    private var webSocket: WebSocketProtocolState?
    private var webSocketHandler: (any WebSocketHandler)?

    init(fd: Int32, remoteAddress: String, loop: IOLoop, context: Context, countedAddress: String? = nil,
         onReserve: Bool = false) {
        self.fd = fd
        self.remoteAddress = remoteAddress
        self.countedAddress = countedAddress
        self.onReserve = onReserve
        self.loop = loop
        self.context = context
        self.parser = HTTPRequestParser(limits: context.limits)
        self.lifecycle = ConnectionLifecycle(limits: context.limits, now: context.clock())
        context.counters.liveConnectionObjects.wrappingAdd(1, ordering: .relaxed)
    }

    deinit {
        context.counters.liveConnectionObjects.wrappingSubtract(1, ordering: .relaxed)
    }

    /// Starts reading. On `loop.queue`.
    func start() {
        let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: loop.queue)
        source.setEventHandler { self.readable() }
        source.setCancelHandler { self.sourceCancelled() }
        readSource = source
        liveSources = 1
        source.activate()
    }

    // MARK: Reading

    private func readable() {
        if closed { return }
        let buffer = loop.readBuffer
        for _ in 0..<4 {
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
            if webSocket != nil && !lingering {
                webSocketReceived(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
                if closed { return }
                if count < buffer.count { break } else { continue }
            }
            if stream != nil && !lingering {
                // A stream's client has nothing more to say; its bytes are dropped unread.
                if count < buffer.count { break } else { continue }
            }
            if lingering {
                lingerBytes += count
                if lingerBytes > HTTPLimits.lingerMaxBytes {
                    close()
                    return
                }
            } else {
                parser.feed(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
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
    /// would fire forever), and not while a pipelining client has more than
    /// `readAheadLimit` bytes waiting behind the request being handled.
    private func updateReadInterest() {
        guard !closed, let source = readSource else { return }
        let wanted = !peerClosed && (lingering || stream != nil || parser.bufferedByteCount < Self.readAheadLimit)
        if wanted && readSuspended {
            readSuspended = false
            source.resume()
        } else if !wanted && !readSuspended {
            readSuspended = true
            source.suspend()
        }
    }

    // MARK: The request/response loop

    /// Moves the connection forward as far as it can: queue a delivered response, write,
    /// then take the next request once everything before it is written.
    private func pump() {
        assert(loop.isCurrent, "HTTPConnection used off its I/O queue")
        if pumping || closed { return }
        pumping = true
        defer { pumping = false }
        while !closed {
            if let answer = pendingResponse {
                pendingResponse = nil
                switch answer {
                case .response(let response):
                    queue(response)
                case .stream(let head, let options, let opened):
                    beginStream(head, options: options, opened: opened)
                case .webSocket(let head, let limits, let handler):
                    beginWebSocket(head, limits: limits, handler: handler)
                }
            }
            if outputOffset < output.count && !flush() { break }
            if stream != nil {
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
            if inFlight { break }
            if shuttingDown && lifecycle.isIdle(parserPhase: parser.phase) {
                close()
                break
            }
            guard let event = parser.next() else {
                lifecycle.inputParsed(parser.phase, now: context.clock(), bodyBytes: parser.bodyProgress)
                if peerClosed { close() }
                break
            }
            switch event {
            case .continueExpected:
                HTTPResponseSerializer.append(HTTPResponseSerializer.continueBytes, to: &output)
            case .error(let error):
                context.counters.malformed.wrappingAdd(1, ordering: .relaxed)
                respondFinally(status: error.status, minorVersion: 1)
            case .request(let request, let keepAlive):
                dispatch(request, keepAlive: keepAlive)
            }
        }
        accountUnsent()
        updateReadInterest()
    }

    /// Brings `ServerCounters.unsentBytes` up to date with this connection's output: the
    /// whole buffer while any of it is unsent, since the written part is only released
    /// when it is drained (counting only the unsent tail let RSS reach ~7× the bound with
    /// 1,000 readers that stopped reading a 4.5 MB answer; BENCHMARKS "Unread responses").
    private func accountUnsent() {
        let waiting = closed || outputOffset == output.count ? 0 : output.count
        guard waiting != accountedUnsent else { return }
        context.counters.unsentBytes.wrappingAdd(waiting - accountedUnsent, ordering: .relaxed)
        accountedUnsent = waiting
    }

    private func dispatch(_ request: HTTPRequest, keepAlive: Bool) {
        var request = request
        var keepAlive = keepAlive
        request.peerAddress = remoteAddress
        let trusted = context.trustedProxies
        request.remoteAddress = ForwardedFor.client(peer: remoteAddress, header: request.headers["X-Forwarded-For"], trusted: trusted)
        request.forwardedProto = ForwardedFor.proto(peer: remoteAddress, header: request.headers["X-Forwarded-Proto"], trusted: trusted)
        var overAddressCap = onReserve
        if trusted.contains(remoteAddress) && request.remoteAddress != countedAddress {
            // Behind a proxy, the cap is per forwarded client, from its first request on.
            if let previous = countedAddress { context.addresses.release(previous) }
            countedAddress = nil
            if context.addresses.acquire(request.remoteAddress) {
                countedAddress = request.remoteAddress
            } else {
                overAddressCap = true
            }
        }
        if overAddressCap {
            // Past `maxConnectionsPerAddress` only health checks are served, one per
            // connection (`HTTPServerConfiguration.uncappedPaths`).
            guard context.uncappedPaths.contains(request.path) else {
                context.counters.addressRefusals.wrappingAdd(1, ordering: .relaxed)
                respondFinally(status: 429, minorVersion: request.minorVersion)
                return
            }
            keepAlive = false
        }
        let forwardedID = trusted.contains(remoteAddress) ? ForwardedFor.requestID(request.headers["X-Request-Id"]) : nil
        request.requestID = forwardedID
            ?? context.requestIDPrefix + "-" + String(context.counters.requestIDs.add(1, ordering: .relaxed).newValue, radix: 36)
        current = CurrentRequest(method: request.method, path: request.path, requestID: request.requestID,
                                 client: request.remoteAddress, start: context.clock(), bodyBytes: request.body.count)
        inFlight = true
        sequence &+= 1
        let number = sequence
        currentIsHead = request.method == "HEAD"
        currentKeepAlive = keepAlive
        currentMinorVersion = request.minorVersion
        lifecycle.requestDispatched()
        context.counters.requests.wrappingAdd(1, ordering: .relaxed)
        let loop = self.loop
        let responder = HTTPResponder(connectionQueue: loop.queue, answer: { answer in
            if loop.isCurrent {
                self.deliver(answer, for: number)
            } else {
                loop.queue.async { self.deliver(answer, for: number) }
            }
        })
        context.handler.handle(request, responder: responder)
    }

    /// The handler's answer, on `loop.queue`. A second answer, or one for a connection
    /// that already closed, is dropped.
    private func deliver(_ answer: HTTPResponder.Answer, for number: UInt64) {
        guard !closed, inFlight, number == sequence, pendingResponseBox == nil else {
            switch answer {
            case .stream(_, _, let opened): opened(nil)
            case .webSocket(_, _, let handler): handler.closed(code: nil)
            case .response: break
            }
            return
        }
        pendingResponse = answer
        pump()
        accountIncomplete()  // an upgrade's early frames
    }

    // MARK: Open-ended bodies (server-sent events)

    /// Queues the head of a close-delimited body and hands out the stream. Requests the
    /// client pipelined behind this one are dropped: the connection is the stream's now.
    private func beginStream(_ head: HTTPResponse, options: HTTPStreamOptions, opened: @Sendable (HTTPEventStream?) -> Void) {
        beginOpenEnded(head, options: options) { HTTPResponseSerializer.serializeStreamHead($0, into: &$1) }
        context.counters.openStreams.wrappingAdd(1, ordering: .relaxed)
        opened(HTTPEventStream(connection: self))
    }

    /// Queues the `101` and turns the connection into a WebSocket session. Bytes the client
    /// sent after its handshake (RFC 6455 §4.1 says it waits, but nothing stops it) are
    /// its first frames.
    private func beginWebSocket(_ head: HTTPResponse, limits: WebSocketLimits, handler: any WebSocketHandler) {
        let early = parser.takeBufferedBytes()
        webSocket = WebSocketProtocolState(limits: limits, now: context.clock())
        webSocketHandler = handler
        let options = HTTPStreamOptions(
            maxBufferedBytes: limits.maxBufferedBytes,
            overflowBytes: WebSocketFrameWriter.close(.policyViolation, reason: Self.slowReaderReason))
        beginOpenEnded(head, options: options) { HTTPResponseSerializer.serializeUpgradeHead($0, into: &$1) }
        context.counters.openWebSockets.wrappingAdd(1, ordering: .relaxed)
        handler.opened(WebSocketSession(connection: self))
        if !early.isEmpty && !closed {
            early.withUnsafeBytes { webSocketReceived($0) }
        }
    }

    /// What every open-ended answer shares: from here on the connection reads no more
    /// requests and writes `head` then output bounded by `options`.
    private func beginOpenEnded(_ head: HTTPResponse, options: HTTPStreamOptions, serialize: (HTTPResponse, inout [UInt8]) -> Void) {
        inFlight = false
        stream = options
        parser = HTTPRequestParser(limits: context.limits)
        var head = head
        if let current { head.headers.add("X-Request-Id", current.requestID) }
        serialize(head, &output)
        streamUnitEnds = [output.count]
        lifecycle.streamStarted(now: context.clock())
    }

    /// Frames from the peer, through the protocol state; its actions carried out in order.
    private func webSocketReceived(_ bytes: UnsafeRawBufferPointer) {
        guard webSocket != nil, let handler = webSocketHandler else { return }
        webSocketBytesReceived += bytes.count
        let actions = webSocket!.received(bytes, now: context.clock())  // in place: no copy of its buffer
        if let failure = webSocket!.parser.failure, failure.closeCode.isPolicyClose, !actions.isEmpty {
            logPolicyClose(failure.closeCode, failure.closeReason)
        }
        // Counted before anything is answered: a pong proves the bytes before its ping are.
        accountIncomplete()
        if closeAfterFlush { return }
        for action in actions {
            perform(action, handler: handler)
            if closed || closeAfterFlush { return }
        }
    }

    /// Brings `Context.incomplete` up to date with what this connection holds for input
    /// not complete yet, and refuses the connection when that passes a bound: the parser's
    /// unparsed bytes and partial body, or a WebSocket's partial frames and fragments plus
    /// what its application holds. Also times a WebSocket's partial message.
    private func accountIncomplete() {
        let held: Int
        if closed || lingering || closeAfterFlush {
            held = 0
        } else if let state = webSocket {
            held = state.closeSent ? 0 : state.parser.heldByteCount + applicationHeld
        } else if stream != nil {
            held = 0
        } else {
            held = parser.heldByteCount
        }
        guard held != accountedIncomplete else { return }
        if accountedIncomplete == 0 { incompleteAddress = countedAddress ?? remoteAddress }
        let verdict = context.incomplete.account(incompleteAddress, from: accountedIncomplete, to: held)
        accountedIncomplete = held
        if webSocket != nil { webSocket!.holding(held, now: context.clock()) }
        if verdict != .keep { refuseIncomplete(verdict) }
    }

    /// Past `maxIncompleteBytes` (server) or `maxIncompleteBytesPerAddress`: a WebSocket is
    /// closed with 1013 or 1008, an HTTP request answered 503 with `Retry-After` (a
    /// request whose answer is still owed is closed); either way what it held is dropped
    /// at once and the refusal logged.
    private func refuseIncomplete(_ verdict: IncompleteBytes.Verdict) {
        context.counters.incompleteRefusals.wrappingAdd(1, ordering: .relaxed)
        let serverFull = verdict == .serverFull
        let reason = serverFull ? Self.serverFullReason : Self.addressFullReason
        if webSocket != nil {
            applicationHeld = 0
            let code: WebSocketCloseCode = serverFull ? .tryAgainLater : .policyViolation
            logPolicyClose(code, reason)
            webSocketClose(code, reason: reason)  // drops the parser's bytes
        } else {
            context.log("HTTP: refused \(incompleteAddress) with 503: \(reason)")
            parser = HTTPRequestParser(limits: context.limits)
            accountIncomplete()  // released before the answer goes out
            if inFlight || pendingResponseBox != nil {
                close()
            } else {
                currentIsHead = false
                currentKeepAlive = false
                currentMinorVersion = 1
                var response = HTTPResponseSerializer.errorResponse(status: 503, message: reason)
                response.headers.add("Retry-After", "1")
                queue(response)
                pump()
            }
        }
    }

    static let serverFullReason = "Server holds too much incomplete input; try again later"
    static let addressFullReason = "Too much incomplete input from your address; finish or close other messages first"

    /// The application's bytes for a message it is joining (on `loop.queue`).
    func webSocketHolding(_ bytes: Int) {
        guard !closed, webSocket?.closeSent == false else { return }
        applicationHeld = bytes
        accountIncomplete()
    }

    /// The reason of the close 1008 that ends a session whose peer does not read.
    static let slowReaderReason = "Client not reading: too many bytes waiting to be sent"

    /// Every policy close (1008, 1009, 1013) is logged with the client's address and why.
    private func logPolicyClose(_ code: WebSocketCloseCode, _ reason: String) {
        context.log("WebSocket: closed \(countedAddress ?? remoteAddress) with \(code): \(reason)")
    }

    private func perform(_ action: WebSocketProtocolState.Action, handler: any WebSocketHandler) {
        switch action {
        case .deliver(let message): handler.received(message)
        case .send(let frame): webSocketSend(frame)
        case .finish(let frame): streamFinish(frame)
        case .closeNow: close()
        }
    }

    /// A frame for the peer, under the stream's bound (on `loop.queue`).
    func webSocketSend(_ frame: [UInt8]) {
        guard webSocket?.closeSent == false else { return }
        streamSend(frame)
        if closeAfterFlush {
            // The peer fell too far behind: the overflow's close frame 1008 ended the session.
            _ = webSocket?.close(.policyViolation, reason: "", now: context.clock())
        }
    }

    /// Our closing handshake (on `loop.queue`): the close frame goes last, then the
    /// connection drains the peer's answer and closes.
    func webSocketClose(_ code: WebSocketCloseCode, reason: String) {
        guard !closed, let frame = webSocket?.close(code, reason: reason, now: context.clock()) else { return }
        applicationHeld = 0
        accountIncomplete()  // released before the close frame goes out
        streamFinish(frame)
    }

    /// Runs `body` for each of `connections` on its I/O queue, one block per queue rather
    /// than one per connection (a fan-out to 10,000 streams costs a hop per core).
    static func onTheirQueues(_ connections: [HTTPConnection], _ body: @escaping @Sendable (HTTPConnection) -> Void) {
        var byLoop: [ObjectIdentifier: (IOLoop, [HTTPConnection])] = [:]
        for connection in connections {
            byLoop[ObjectIdentifier(connection.loop), default: (connection.loop, [])].1.append(connection)
        }
        for (_, (loop, group)) in byLoop {
            loop.queue.async {
                for connection in group { body(connection) }
            }
        }
    }

    /// Queues bytes on the open stream (on `loop.queue`).
    func streamSend(_ bytes: [UInt8]) {
        guard !closed, let options = stream, !closeAfterFlush else { return }
        let waiting = output.count - outputOffset
        // One event larger than the bound still goes out on a drained connection: the bound
        // is on what a reader lets pile up, not on the size of a single value.
        if waiting > 0 && (waiting + bytes.count > options.maxBufferedBytes
            || context.counters.unsentBytes.load(ordering: .relaxed) + bytes.count > context.limits.maxUnsentBytes) {
            if waiting + bytes.count <= options.maxBufferedBytes {
                context.counters.unsentRefusals.wrappingAdd(1, ordering: .relaxed)
            }
            overflow(options)
            return
        }
        let wasDrained = outputOffset == output.count
        output.append(contentsOf: bytes)
        streamUnitEnds.append(output.count)
        streamBytes += bytes.count
        if wasDrained { lifecycle.streamQueued(now: context.clock()) }
        pump()
    }

    /// A reader fell too far behind: what has not started going out is dropped (memory is
    /// released at once), the unit being written is finished, `overflowBytes` (SSE:
    /// `cancel`) follow, and the connection closes once they are written. A reader that
    /// catches up therefore sees whole events, then `cancel`, then the end; one that never
    /// reads again is closed by `writeTimeout`.
    private func overflow(_ options: HTTPStreamOptions) {
        context.counters.streamOverflows.wrappingAdd(1, ordering: .relaxed)
        if webSocket != nil { logPolicyClose(.policyViolation, Self.slowReaderReason) }
        let cut = streamUnitEnds.first(where: { $0 >= outputOffset }) ?? output.count
        if cut < output.count { output.removeSubrange(cut...) }
        streamUnitEnds = []
        output.append(contentsOf: options.overflowBytes)
        closeAfterFlush = true
        pump()
    }

    /// Queues the stream's last bytes and closes once they are written.
    func streamFinish(_ bytes: [UInt8]) {
        guard !closed, stream != nil, !closeAfterFlush else { return }
        output.append(contentsOf: bytes)
        lifecycle.streamQueued(now: context.clock())
        closeAfterFlush = true
        pump()
    }

    private func queue(_ response: HTTPResponse) {
        inFlight = false
        var response = response
        let unsent = context.counters.unsentBytes.load(ordering: .relaxed)
        if !currentIsHead && response.body.count > HTTPLimits.alwaysSentBytes
            && unsent > 0 && unsent + response.body.count > context.limits.maxUnsentBytes {
            // Clients that do not read already hold `maxUnsentBytes`: refuse this body
            // rather than hold it too; its memory goes as soon as this returns.
            context.counters.unsentRefusals.wrappingAdd(1, ordering: .relaxed)
            response = HTTPResponseSerializer.errorResponse(status: 503)
            response.headers.add("Retry-After", "1")
        }
        let keepAlive = currentKeepAlive && !shuttingDown && !HTTPResponseSerializer.requestsClose(response)
        if let current { response.headers.add("X-Request-Id", current.requestID) }
        HTTPResponseSerializer.serialize(
            response, isHead: currentIsHead, keepAlive: keepAlive, minorVersion: currentMinorVersion, into: &output)
        logAccess(status: response.status, bytes: currentIsHead ? 0 : response.body.count, isStream: false)
        if !keepAlive { closeAfterFlush = true }
        lifecycle.responseQueued(now: context.clock())
    }

    /// Writes the access-log record of the current request, once.
    private func logAccess(status: Int, bytes: Int, isStream: Bool, received: Int = 0) {
        guard let request = current else { return }
        current = nil
        guard let accessLog = context.accessLog else { return }
        accessLog(HTTPAccessRecord(
            method: request.method, path: request.path, status: status, bytes: bytes,
            durationNanoseconds: context.clock() &- request.start, requestID: request.requestID,
            client: request.client, peer: remoteAddress, isStream: isStream, requestBytes: request.bodyBytes + received))
    }

    /// An answer from the HTTP layer itself (parse error, timeout), after which the
    /// connection closes: the framing of anything that follows cannot be trusted.
    private func respondFinally(status: Int, minorVersion: Int) {
        currentIsHead = false
        currentKeepAlive = false
        currentMinorVersion = minorVersion
        queue(HTTPResponseSerializer.errorResponse(status: status))
    }

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
                outputOffset += count
                if outputOffset < output.count { lifecycle.wrote(now: context.clock()) }
            case .wouldBlock:
                armWriteSource()
                return false
            }
        }
        // Keep a small buffer for the next response, but not what a large one grew, and
        // nothing on an open stream (see `keptOutputCapacity`).
        if stream != nil || output.capacity > Self.keptOutputCapacity {
            output = []
            streamUnitEnds = []
        } else {
            output.removeAll(keepingCapacity: true)
        }
        outputOffset = 0
        if let source = writeSource, !writeSuspended {
            writeSuspended = true
            source.suspend()
        }
        lifecycle.outputDrained(now: context.clock())
        return true
    }

    private func armWriteSource() {
        if let source = writeSource {
            if writeSuspended {
                writeSuspended = false
                source.resume()
            }
            return
        }
        let source = DispatchSource.makeWriteSource(fileDescriptor: fd, queue: loop.queue)
        source.setEventHandler { self.writable() }
        source.setCancelHandler { self.sourceCancelled() }
        writeSource = source
        liveSources += 1
        source.activate()
    }

    private func writable() {
        if closed { return }
        pump()
    }

    // MARK: Closing

    /// Reports the end of an open stream once: when its last bytes are written (before
    /// the lingering close, so the application forgets it as soon as the peer has
    /// everything), or when the connection closes first.
    private func endStream() {
        guard let options = stream, !streamEnded else { return }
        streamEnded = true
        if let handler = webSocketHandler {
            logAccess(status: 101, bytes: streamBytes, isStream: true, received: webSocketBytesReceived)
            context.counters.openWebSockets.wrappingSubtract(1, ordering: .relaxed)
            webSocketHandler = nil
            handler.closed(code: webSocket?.closeCode)
            return
        }
        logAccess(status: 200, bytes: streamBytes, isStream: true)
        context.counters.openStreams.wrappingSubtract(1, ordering: .relaxed)
        options.onClose()
    }

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
        if webSocket != nil {
            webSocketClose(.goingAway, reason: "Server shutting down")
            return
        }
        if stream != nil {
            // A stream never becomes idle: end it after what is queued.
            closeAfterFlush = true
            pump()
            return
        }
        if !inFlight && pendingResponseBox == nil && outputOffset == output.count
            && lifecycle.isIdle(parserPhase: parser.phase) {
            close()
        }
    }

    /// Called by the loop's periodic sweep.
    func checkTimeouts(now: Nanoseconds) {
        if closed { return }
        if webSocket != nil, let handler = webSocketHandler, let action = webSocket!.tick(now: now) {
            if case .finish = action, let code = webSocket!.closeCode, code.isPolicyClose {
                // A message incomplete for too long: dropped with the session.
                context.counters.incompleteRefusals.wrappingAdd(1, ordering: .relaxed)
                logPolicyClose(code, webSocket!.closeReason)
                applicationHeld = 0
                accountIncomplete()  // released before the close frame goes out
            }
            perform(action, handler: handler)
            if closed { return }
        }
        switch lifecycle.check(now: now) {
        case .none:
            return
        case .close:
            close()
        case .respondTimeoutAndClose:
            if inFlight || closeAfterFlush {
                close()
            } else {
                respondFinally(status: 408, minorVersion: 1)
                pump()
            }
        }
    }

    /// Cancels the sources; the fd is closed when the last cancel handler runs.
    func close() {
        assert(loop.isCurrent, "HTTPConnection used off its I/O queue")
        if closed { return }
        closed = true
        lifecycle.closed()
        if let source = readSource {
            if readSuspended {
                readSuspended = false
                source.resume()
            }
            source.cancel()
        }
        if let source = writeSource {
            if writeSuspended {
                writeSuspended = false
                source.resume()
            }
            source.cancel()
        }
    }

    private func sourceCancelled() {
        liveSources -= 1
        guard liveSources == 0 else { return }
        do {
            try Syscall.close(fd)
        } catch {
            context.log("HTTP connection: \(error)")
        }
        readSource = nil
        writeSource = nil
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
        parser = HTTPRequestParser(limits: context.limits)
        loop.unregister(self)
        endStream()
        stream = nil
        webSocket = nil
        context.onClose()
    }
}
