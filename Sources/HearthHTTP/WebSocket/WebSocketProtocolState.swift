/// One WebSocket session's protocol side as a pure state machine, so it is tested from
/// literals: bytes and clock ticks in, actions out. No sockets: `HTTPConnection` carries
/// the actions out through its bounded output, and tests feed it byte literals.
///
/// The closing handshake (RFC 6455 §7): a peer's close is answered with a close carrying
/// the same code (1000 when it had none) and the TCP connection is closed once that is
/// written, the server closing first as §7.1.1 recommends. A frame that breaks the rules
/// fails the connection: a close with the error's code, then the TCP close. Our own close
/// (application or shutdown) is sent once; the connection then drains the peer's answer
/// during its lingering close, without parsing it.
struct WebSocketProtocolState {
    enum Action: Equatable {
        /// A whole message for the application.
        case deliver(WebSocketMessage)
        /// Bytes to write (a pong or a ping).
        case send([UInt8])
        /// The last bytes to write (a close frame); close the connection after them.
        case finish([UInt8])
        /// Close the TCP connection now (the peer is gone).
        case closeNow
    }

    private(set) var parser: WebSocketFrameParser
    private(set) var lifecycle: WebSocketLifecycle
    /// Our close frame is queued: nothing more is sent, and received data is ignored.
    private(set) var closeSent = false
    /// How the session ended, for the application: the peer's code when it closed first,
    /// ours otherwise (1006 "abnormal" never appears: nil means no close frame at all).
    private(set) var closeCode: WebSocketCloseCode?
    /// The reason of our close, when we closed.
    private(set) var closeReason = ""

    init(limits: WebSocketLimits, now: Nanoseconds) {
        parser = WebSocketFrameParser(limits: limits)
        lifecycle = WebSocketLifecycle(limits: limits, now: now)
    }

    /// Bytes from the peer.
    mutating func received(_ bytes: UnsafeRawBufferPointer, now: Nanoseconds) -> [Action] {
        guard !closeSent else { return [] }  // after our close, only the peer's answer is awaited
        parser.feed(bytes)
        var actions: [Action] = []
        while let result = parser.next() {
            lifecycle.heard(now: now)
            switch result {
            case .success(.text(let bytes)):
                actions.append(.deliver(.text(bytes)))
            case .success(.binary(let bytes)):
                actions.append(.deliver(.binary(bytes)))
            case .success(.ping(let payload)):
                actions.append(.send(WebSocketFrameWriter.frame(.pong, payload)))
            case .success(.pong):
                break
            case .success(.close(let code, _)):
                closeCode = code
                actions.append(finishing(code ?? .normal, reason: "", now: now))
                return actions
            case .failure(let error):
                closeCode = error.closeCode
                actions.append(finishing(error.closeCode, reason: error.closeReason, now: now))
                return actions
            }
        }
        return actions
    }

    /// Our own close (application, shutdown, a reader too slow): the close frame to write
    /// last, or nil when a close was already sent.
    mutating func close(_ code: WebSocketCloseCode, reason: String, now: Nanoseconds) -> [UInt8]? {
        guard !closeSent else { return nil }
        closeCode = code
        closeReason = reason
        // Nothing more is parsed: what an incomplete message held is released now.
        parser = WebSocketFrameParser(limits: parser.limits)
        lifecycle.holding(0, now: now)
        guard case .finish(let frame) = finishing(code, reason: reason, now: now) else { return nil }
        return frame
    }

    /// Bytes held for the message being received (the parser's and the application's):
    /// for the partial message deadline.
    mutating func holding(_ bytes: Int, now: Nanoseconds) {
        lifecycle.holding(bytes, now: now)
    }

    /// The connection reads nothing while its application is behind: the peer counts as
    /// heard (its pongs wait unread), and a message cut at the last read is not timed.
    mutating func paused(now: Nanoseconds) {
        lifecycle.paused(now: now)
    }

    /// The reason of the close that drops a message incomplete for too long.
    static func partialMessageReason(_ seconds: Double) -> String {
        let time = seconds >= 1 ? "\(Int(seconds)) s" : "\(Int(seconds * 1000)) ms"
        return "Message incomplete for \(time); send each message whole without pausing"
    }

    /// What the clock asks for at `now`: a ping on silence, closing a dead connection, or
    /// dropping a message that stopped arriving (close 1008).
    mutating func tick(now: Nanoseconds) -> Action? {
        switch lifecycle.check(now: now) {
        case .none: return nil
        case .dropPartialMessage:
            let seconds = Double(lifecycle.partialMessageTimeout) / 1e9
            return close(.policyViolation, reason: Self.partialMessageReason(seconds), now: now).map { .finish($0) }
        case .sendPing:
            lifecycle.pingSent(now: now)
            return .send(WebSocketFrameWriter.frame(.ping, [UInt8]()))
        case .close:
            lifecycle.closed()
            return .closeNow
        }
    }

    private mutating func finishing(_ code: WebSocketCloseCode, reason: String, now: Nanoseconds) -> Action {
        closeSent = true
        lifecycle.closeSent(now: now)
        return .finish(WebSocketFrameWriter.close(code, reason: reason))
    }
}

/// A whole message from the peer, fragments joined; text is valid UTF-8.
public enum WebSocketMessage: Sendable, Equatable {
    case text([UInt8])
    case binary([UInt8])
}
