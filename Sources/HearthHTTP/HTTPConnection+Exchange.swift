/// The HTTP/1.1 mode of a connection (`HTTPConnection.Mode.exchange`): the request parser
/// and the one request being answered. Every connection starts here; an answer that opens
/// a stream or upgrades to WebSocket replaces it (its parser's unread bytes go to the
/// WebSocket as its first frames). Confined to the connection's I/O queue.
final class HTTPExchange {
    var parser: HTTPRequestParser
    /// The handler owes a response for request number `sequence`.
    var inFlight = false
    private(set) var sequence: UInt64 = 0
    /// Out of line: an answer waits here only while earlier output drains; inline, its
    /// 72 bytes were part of every idle connection.
    private var pendingAnswer: AnswerBox?
    var isHead = false
    var keepAlive = true
    var minorVersion = 1
    /// The request being answered, for the access log.
    var current: CurrentRequest?

    private final class AnswerBox {
        let answer: HTTPResponder.Answer
        init(_ answer: HTTPResponder.Answer) { self.answer = answer }
    }

    init(limits: HTTPLimits) {
        parser = HTTPRequestParser(limits: limits)
    }

    /// The body of the request being handled, until its answer is queued: counted with
    /// the input still arriving under `HTTPLimits.maxIncompleteBytes` (its memory, and more
    /// once parsed, stays held while the handler works, say behind the database's writer).
    var bodyBytesInFlight: Int { inFlight ? current?.bodyBytes ?? 0 : 0 }

    /// A request is being handled, or its answer waits for earlier output to drain.
    var owesAnswer: Bool { inFlight || pendingAnswer != nil }

    /// A request went to the handler: its number, for matching the answer.
    func dispatched(_ request: CurrentRequest, isHead: Bool, keepAlive: Bool, minorVersion: Int) -> UInt64 {
        current = request
        inFlight = true
        sequence &+= 1
        (self.isHead, self.keepAlive, self.minorVersion) = (isHead, keepAlive, minorVersion)
        return sequence
    }

    /// Whether an answer for request `number` is the one owed (a second answer, or one for
    /// an earlier request, is not).
    func awaits(_ number: UInt64) -> Bool {
        inFlight && number == sequence && pendingAnswer == nil
    }

    func hold(_ answer: HTTPResponder.Answer) {
        pendingAnswer = AnswerBox(answer)
    }

    /// The answer waiting to be queued, if any (forgotten here).
    func takeAnswer() -> HTTPResponder.Answer? {
        defer { pendingAnswer = nil }
        return pendingAnswer?.answer
    }

    /// The request being answered, forgotten here (its access record is written once).
    func takeCurrent() -> CurrentRequest? {
        defer { current = nil }
        return current
    }
}

extension HTTPConnection {
    /// Takes the next request once everything before it is written; false when nothing
    /// more can happen until the next read, write or answer.
    func nextRequest(in exchange: HTTPExchange) -> Bool {
        if exchange.inFlight { return false }
        if shuttingDown && lifecycle.isIdle(parserPhase: exchange.parser.phase) {
            close()
            return false
        }
        guard let event = exchange.parser.next() else {
            lifecycle.inputParsed(exchange.parser.phase, now: context.clock(), bodyBytes: exchange.parser.bodyProgress)
            if peerClosed { close() }
            return false
        }
        switch event {
        case .continueExpected:
            HTTPResponseSerializer.append(HTTPResponseSerializer.continueBytes, to: &output)
        case .error(let error):
            context.counters.malformed.wrappingAdd(1, ordering: .relaxed)
            respondFinally(status: error.status, minorVersion: 1, in: exchange)
        case .request(let request, let keepAlive):
            dispatch(request, keepAlive: keepAlive, in: exchange)
        }
        return true
    }

    private func dispatch(_ request: HTTPRequest, keepAlive: Bool, in exchange: HTTPExchange) {
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
                respondFinally(status: 429, minorVersion: request.minorVersion, in: exchange)
                return
            }
            keepAlive = false
        }
        let forwardedID = trusted.contains(remoteAddress) ? ForwardedFor.requestID(request.headers["X-Request-Id"]) : nil
        request.requestID = forwardedID
            ?? context.requestIDPrefix + "-" + String(context.counters.requestIDs.add(1, ordering: .relaxed).newValue, radix: 36)
        let current = CurrentRequest(method: request.method, path: request.path, requestID: request.requestID,
                                     client: request.remoteAddress, start: context.clock(), bodyBytes: request.body.count)
        let number = exchange.dispatched(current, isHead: request.method == "HEAD", keepAlive: keepAlive,
                                         minorVersion: request.minorVersion)
        lifecycle.requestDispatched()
        context.counters.requests.wrappingAdd(1, ordering: .relaxed)
        let loop = self.loop
        // Answers from other threads go through the loop's mailbox: the writer completes a
        // whole batch of writes at once, and their answers then wake the loop once, not
        // once each. They take its answers lane: this connection is in no fan-out (it has
        // an exchange, so it is no stream or WebSocket), so nothing posted must precede
        // them, and they do not wait behind a fan-out to thousands of listeners.
        let responder = HTTPResponder(connectionQueue: loop.queue, answer: { answer in
            if loop.isCurrent {
                self.deliver(answer, for: number)
            } else {
                loop.postAnswer { self.deliver(answer, for: number) }
            }
        })
        context.handler.handle(request, responder: responder)
    }

    /// The handler's answer, on `loop.queue`. A second answer, or one for a connection
    /// that already closed, is dropped.
    private func deliver(_ answer: HTTPResponder.Answer, for number: UInt64) {
        guard !closed, case .exchange(let exchange) = mode, exchange.awaits(number) else {
            switch answer {
            case .stream(_, _, let opened): opened(nil)
            case .webSocket(_, _, let handler): handler.closed(code: nil)
            case .response: break
            }
            return
        }
        exchange.hold(answer)
        pump()
        accountIncomplete()  // an upgrade's early frames
    }

    /// Queues a delivered answer: a response, or the head of a stream, which replaces
    /// the exchange (`beginStream`, `beginWebSocket`).
    func begin(_ answer: HTTPResponder.Answer, in exchange: HTTPExchange) {
        switch answer {
        case .response(let response):
            exchange.current?.tag = response.accessTag
            queue(response, in: exchange)
        case .stream(let head, let options, let opened):
            exchange.current?.tag = head.accessTag
            beginStream(head, options: options, opened: opened, after: exchange)
        case .webSocket(let head, let limits, let handler):
            exchange.current?.tag = head.accessTag
            beginWebSocket(head, limits: limits, handler: handler, after: exchange)
        }
    }

    private func queue(_ response: HTTPResponse, in exchange: HTTPExchange) {
        exchange.inFlight = false
        accountIncomplete()  // the request's body released before its answer goes out
        var response = response
        let unsent = context.counters.unsent.current
        if !exchange.isHead && response.body.count > HTTPLimits.alwaysSentBytes
            && unsent > 0 && unsent + response.body.count > context.counters.unsent.limit {
            // Clients that do not read already hold `maxUnsentBytes`: refuse this body
            // rather than hold it too; its memory goes as soon as this returns.
            context.counters.unsentRefusals.wrappingAdd(1, ordering: .relaxed)
            response = HTTPResponseSerializer.errorResponse(status: 503)
            response.headers.add("Retry-After", "1")
        }
        let keepAlive = exchange.keepAlive && !shuttingDown && !HTTPResponseSerializer.requestsClose(response)
        if let current = exchange.current { response.headers.add("X-Request-Id", current.requestID) }
        HTTPResponseSerializer.serialize(
            response, isHead: exchange.isHead, keepAlive: keepAlive, minorVersion: exchange.minorVersion, into: &output)
        logAccess(exchange.takeCurrent(), status: response.status, bytes: exchange.isHead ? 0 : response.body.count,
                  isStream: false)
        if !keepAlive { closeAfterFlush = true }
        lifecycle.responseQueued(now: context.clock())
    }

    /// An answer from the HTTP layer itself (parse error, timeout, refusal), after which
    /// the connection closes: the framing of anything that follows cannot be trusted.
    func respondFinally(status: Int, minorVersion: Int, in exchange: HTTPExchange) {
        respondFinally(HTTPResponseSerializer.errorResponse(status: status), minorVersion: minorVersion, in: exchange)
    }

    private func respondFinally(_ response: HTTPResponse, minorVersion: Int, in exchange: HTTPExchange) {
        exchange.isHead = false
        exchange.keepAlive = false
        exchange.minorVersion = minorVersion
        queue(response, in: exchange)
    }

    /// Too much incomplete input (`accountIncomplete`, never while an answer is owed): the
    /// request is answered 503 with `Retry-After`.
    func refuseIncomplete(_ exchange: HTTPExchange, reason: String) {
        context.log("HTTP: refused \(incompleteAddress) with 503: \(reason)")
        exchange.parser = HTTPRequestParser(limits: context.limits)
        accountIncomplete()  // released before the answer goes out
        var response = HTTPResponseSerializer.errorResponse(status: 503, message: reason)
        response.headers.add("Retry-After", "1")
        respondFinally(response, minorVersion: 1, in: exchange)
        pump()
    }
}
