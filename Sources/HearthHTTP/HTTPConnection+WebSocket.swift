/// The WebSocket mode of a connection (`HTTPConnection.Mode.webSocket`), set by
/// `HTTPResponder.upgrade`: received bytes are frames for the protocol state, and the
/// output is an `OpenStream` bounded by `WebSocketLimits.maxBufferedBytes`, ended with a
/// close frame 1008 on overflow. Confined to the connection's I/O queue.
final class WebSocketChannel {
    var state: WebSocketProtocolState
    /// The application; nil once it heard `closed`.
    var handler: (any WebSocketHandler)?
    let stream: OpenStream
    /// Bytes the application holds for a message it is joining (`WebSocketSession.holding`).
    var applicationHeld = 0
    /// Bytes of whole messages the application took and has not handled yet
    /// (`WebSocketSession.waiting`), and whether it asked the connection to stop reading.
    var applicationWaiting = 0
    var readPaused = false
    /// Bytes received over the session (its access record's `requestBytes`).
    var bytesReceived = 0

    init(state: WebSocketProtocolState, handler: any WebSocketHandler, stream: OpenStream) {
        self.state = state
        self.handler = handler
        self.stream = stream
    }

    /// Input not answered yet: partial frames and fragments, what the application holds of
    /// a message it is joining, and the whole messages waiting to be handled; nothing once
    /// our close is sent.
    var heldByteCount: Int {
        state.closeSent ? 0 : state.parser.heldByteCount + applicationHeld + applicationWaiting
    }

    /// The part of `heldByteCount` that is an incomplete message, for its deadline: whole
    /// messages waiting for the application are not the peer's to finish.
    var partialByteCount: Int {
        state.closeSent ? 0 : state.parser.heldByteCount + applicationHeld
    }
}

extension HTTPConnection {
    /// The reason of the close 1008 that ends a session whose peer does not read.
    static let slowReaderReason = "Client not reading: too many bytes waiting to be sent"

    /// Queues the `101` and turns the connection into a WebSocket session. Bytes the client
    /// sent after its handshake (RFC 6455 §4.1 says it waits, but nothing stops it) are
    /// its first frames.
    func beginWebSocket(_ head: HTTPResponse, limits: WebSocketLimits, handler: any WebSocketHandler,
                        after exchange: HTTPExchange) {
        let early = exchange.parser.takeBufferedBytes()
        let options = HTTPStreamOptions(
            maxBufferedBytes: limits.maxBufferedBytes,
            overflowBytes: WebSocketFrameWriter.close(.policyViolation, reason: Self.slowReaderReason))
        let channel = WebSocketChannel(
            state: WebSocketProtocolState(limits: limits, now: context.clock()), handler: handler,
            stream: OpenStream(options: options, request: exchange.takeCurrent()))
        mode = .webSocket(channel)
        startOpenEnded(channel.stream, head) { HTTPResponseSerializer.serializeUpgradeHead($0, into: &$1) }
        context.counters.openWebSockets.wrappingAdd(1, ordering: .relaxed)
        handler.opened(WebSocketSession(connection: self))
        if !early.isEmpty && !closed {
            early.withUnsafeBytes { webSocketReceived(channel, $0) }
        }
    }

    /// Frames from the peer, through the protocol state; its actions carried out in order.
    func webSocketReceived(_ channel: WebSocketChannel, _ bytes: UnsafeRawBufferPointer) {
        guard let handler = channel.handler else { return }
        channel.bytesReceived += bytes.count
        let actions = channel.state.received(bytes, now: context.clock())  // in place: no copy of its buffer
        if let failure = channel.state.parser.failure, failure.closeCode.isPolicyClose, !actions.isEmpty {
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

    /// The session's clock (from the loop's sweep): a ping on silence, closing a dead
    /// connection, or dropping a message that stopped arriving.
    func webSocketTick(_ channel: WebSocketChannel, now: Nanoseconds) {
        // Paused, the connection reads nothing, pongs and the rest of a message included:
        // the peer is not judged by a silence that is ours.
        if channel.readPaused { channel.state.paused(now: now) }
        guard let handler = channel.handler, let action = channel.state.tick(now: now) else { return }
        if case .finish = action, let code = channel.state.closeCode, code.isPolicyClose {
            // A message incomplete for too long: dropped with the session.
            context.counters.incompleteRefusals.wrappingAdd(1, ordering: .relaxed)
            logPolicyClose(code, channel.state.closeReason)
            channel.applicationHeld = 0
            channel.applicationWaiting = 0
            accountIncomplete()  // released before the close frame goes out
        }
        perform(action, handler: handler)
    }

    /// Too much incomplete input (`accountIncomplete`): closed with 1013 when the server
    /// is full, 1008 when the address is.
    func refuseIncomplete(_ channel: WebSocketChannel, serverFull: Bool, reason: String) {
        channel.applicationHeld = 0
        channel.applicationWaiting = 0
        let code: WebSocketCloseCode = serverFull ? .tryAgainLater : .policyViolation
        logPolicyClose(code, reason)
        webSocketClose(code, reason: reason)  // drops the parser's bytes
    }

    /// The session ended (`endStream`): its access record, then the application hears it.
    func webSocketEnded(_ channel: WebSocketChannel, request: CurrentRequest?) {
        guard let handler = channel.handler else { return }
        logAccess(request, status: 101, bytes: channel.stream.bytesSent, isStream: true, received: channel.bytesReceived)
        context.counters.openWebSockets.wrappingSubtract(1, ordering: .relaxed)
        channel.handler = nil
        handler.closed(code: channel.state.closeCode)
    }

    /// The application's bytes for a message it is joining (on `loop.queue`).
    func webSocketHolding(_ bytes: Int) {
        guard !closed, case .webSocket(let channel) = mode, !channel.state.closeSent else { return }
        channel.applicationHeld = bytes
        accountIncomplete()
    }

    /// The application's whole messages not handled yet, and whether to stop reading
    /// meanwhile (on `loop.queue`).
    func webSocketWaiting(_ bytes: Int, pause: Bool) {
        guard !closed, case .webSocket(let channel) = mode, !channel.state.closeSent else { return }
        channel.applicationWaiting = bytes
        if pause && !channel.readPaused { context.counters.readPauses.wrappingAdd(1, ordering: .relaxed) }
        channel.readPaused = pause
        accountIncomplete()
        updateReadInterest()
    }

    /// A frame for the peer, under the stream's bound (on `loop.queue`).
    func webSocketSend(_ frame: [UInt8]) {
        guard case .webSocket(let channel) = mode, !channel.state.closeSent else { return }
        streamSend(frame)
        if closeAfterFlush {
            // The peer fell too far behind: the overflow's close frame 1008 ended the session.
            _ = channel.state.close(.policyViolation, reason: "", now: context.clock())
        }
    }

    /// Our closing handshake (on `loop.queue`): the close frame goes last, then the
    /// connection drains the peer's answer and closes.
    func webSocketClose(_ code: WebSocketCloseCode, reason: String) {
        guard !closed, case .webSocket(let channel) = mode,
              let frame = channel.state.close(code, reason: reason, now: context.clock()) else { return }
        channel.applicationHeld = 0
        channel.applicationWaiting = 0
        accountIncomplete()  // released before the close frame goes out
        streamFinish(frame)
    }

    /// Every policy close (1008, 1009, 1013) is logged with the client's address and why.
    func logPolicyClose(_ code: WebSocketCloseCode, _ reason: String) {
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
}
