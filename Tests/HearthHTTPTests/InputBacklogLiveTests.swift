import Dispatch
import Glibc
import Synchronization
import Testing
@testable import HearthHTTP

/// Holds every text message it receives until `release`, telling the session how many
/// bytes wait (`WebSocketSession.waiting`) and to pause past `bound`; counts what arrives
/// while paused. After `release` it takes each message at once; when `expected` have come,
/// it answers "all N in order" (or "out of order").
final class BacklogSocket: WebSocketHandler {
    struct State {
        var session: WebSocketSession?
        var waitingBytes = 0
        var paused = false
        var released = false
        var count = 0
        var inOrder = true
        /// Bytes delivered while the session was paused (what it read before the pause took).
        var deliveredWhilePaused = 0
        var mostWaiting = 0
    }

    let bound: Int
    let expected: Int
    let state = Mutex(State())
    /// Signalled when the session is first told to pause.
    let pausedSignal = DispatchSemaphore(value: 0)

    init(bound: Int, expected: Int) {
        self.bound = bound
        self.expected = expected
    }

    func opened(_ session: WebSocketSession) {
        state.withLock { $0.session = session }
    }

    func received(_ message: WebSocketMessage) {
        guard case .text(let bytes) = message else { return }
        let (session, reply, firstPause): (WebSocketSession?, [UInt8]?, Bool) = state.withLock { state in
            // Each message starts with its number, then a space.
            let number = Int(String(decoding: bytes.prefix { $0 != UInt8(ascii: " ") }, as: UTF8.self))
            if number != state.count { state.inOrder = false }
            state.count += 1
            if state.paused { state.deliveredWhilePaused += bytes.count }
            var firstPause = false
            if !state.released {
                state.waitingBytes += bytes.count
                state.mostWaiting = max(state.mostWaiting, state.waitingBytes)
                firstPause = !state.paused && state.waitingBytes > bound
                state.paused = state.waitingBytes > bound
                state.session?.waiting(state.waitingBytes, pause: state.paused)
            }
            guard state.count == expected else { return (nil, nil, firstPause) }
            return (state.session, Array((state.inOrder ? "all \(state.count) in order" : "out of order").utf8), firstPause)
        }
        if firstPause { pausedSignal.signal() }
        if let session, let reply { session.send(text: reply) }
    }

    /// Handles everything held: the session reads again.
    func release() {
        let session = state.withLock { state in
            state.released = true
            state.waitingBytes = 0
            state.paused = false
            return state.session
        }
        session?.waiting(0, pause: false)
    }

    func closed(code: WebSocketCloseCode?) {
        state.withLock { $0.session = nil }
    }
}

struct BacklogServer: HTTPHandler {
    let socket: BacklogSocket

    func handle(_ request: HTTPRequest, responder: HTTPResponder) {
        switch WebSocketHandshake.accept(request) {
        case .success(let head): responder.upgrade(head, limits: WebSocketLimits(), handler: socket)
        case .failure(let refusal): responder.respond(refusal.response)
        }
    }
}

/// Input received whole but not handled yet is bounded too: a WebSocket whose application
/// is behind stops reading (TCP holds the client back, nothing is lost or closed), and a
/// request body being handled keeps counting against its address's share of
/// `HTTPLimits.maxIncompleteBytes` until it is answered.
@Suite("Input not answered yet: live")
struct InputBacklogLiveTests {
    static let kib = 1024

    /// The next frame that is not the server's ping, each ping answered with its pong: a
    /// debug build on a loaded machine can take long enough over 16 MiB for the server to
    /// ping a client it has not heard from for `WebSocketLimits.pingInterval`.
    static func nextAnswer(_ client: RawClient) throws -> ServerFrame? {
        while let frame = client.readFrame() {
            guard frame.opcode == 0x9 else { return frame }
            try client.sendFrame(0xA, frame.payload)
        }
        return nil
    }

    @Test func aSessionWhoseApplicationIsBehindStopsReadingAndLosesNothing() async throws {
        let messages = 1_600
        // 16 MiB in all: more than the sockets' buffers take (loopback's grow to a few MiB
        // each way), and in a debug build among parallel tests, minutes of work.
        let size = 10 * Self.kib
        let socket = BacklogSocket(bound: 100 * Self.kib, expected: messages)
        try await withServer(handler: BacklogServer(socket: socket)) { port, server in
            // Made before the session opens: masking 16 MiB in a debug build can take long
            // enough on a loaded machine for the server to ping a silent client.
            let frames = (0..<messages).map { i -> [UInt8] in
                let text = Array("\(i) ".utf8)
                return clientFrame(0x1, text + [UInt8](repeating: UInt8(ascii: "b"), count: size - text.count))
            }
            let client = try RawClient(port: port, timeout: 180)
            #expect(try client.openWebSocket()?.status == 101)
            // The sender blocks once the server stops reading and the buffers are full; a
            // short send timeout tells it so, and it carries on.
            var tv = timeval(tv_sec: 0, tv_usec: 200_000)
            setsockopt(client.fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
            let blocked = DispatchSemaphore(value: 0)
            let sent = DispatchSemaphore(value: 0)
            let fd = client.fd
            DispatchQueue.global().async {
                var signalled = false
                for frame in frames {
                    var offset = 0
                    while offset < frame.count {
                        let n = frame.withUnsafeBytes { send(fd, $0.baseAddress! + offset, frame.count - offset, Int32(MSG_NOSIGNAL)) }
                        if n > 0 { offset += n; continue }
                        if errno == EAGAIN || errno == EWOULDBLOCK {
                            if !signalled { signalled = true; blocked.signal() }
                            continue
                        }
                        if errno == EINTR { continue }
                        return
                    }
                }
                sent.signal()
            }
            // Only a server that stopped reading makes the sender wait: 16 MiB would
            // otherwise all be read (and held) at once. (A sender that blocked earlier, the
            // server slow to read on a loaded machine, finds the pause already there.)
            #expect(socket.pausedSignal.wait(timeout: .now() + 180) == .success)
            #expect(blocked.wait(timeout: .now() + 180) == .success)
            let held = socket.state.withLock { $0 }
            #expect(held.paused && held.count < messages)
            #expect(server.stats.readPauses >= 1)
            // What it holds is counted as input not answered yet.
            #expect(server.incomplete.held(by: "127.0.0.1") >= held.waitingBytes)
            socket.release()
            #expect(sent.wait(timeout: .now() + 180) == .success)
            #expect(try Self.nextAnswer(client)?.text == "all \(messages) in order")
            let after = socket.state.withLock { $0 }
            // The pause takes effect within the read that crossed the bound: what that
            // read carried still arrives, nothing after it.
            #expect(after.mostWaiting <= 100 * Self.kib + 64 * Self.kib + size)
            #expect(after.deliveredWhilePaused <= 64 * Self.kib + size)
            #expect(server.stats.incompleteRefusals == 0)
            // The session goes on: a ping is answered.
            try client.sendFrame(0x9, Array("still".utf8))
            #expect(try Self.nextAnswer(client)?.opcode == 0xA)
            #expect(server.incomplete.held(by: "127.0.0.1") == 0)
        }
    }

    /// A paused session is not judged by the clocks that time the peer: the partial
    /// message cut at the last read and the silence behind it are the server's doing.
    @Test func aPauseLongerThanThePartialMessageTimeoutKeepsTheSession() throws {
        let limits = WebSocketLimits()
        var state = WebSocketProtocolState(limits: limits, now: 0)
        state.holding(1_000, now: 0)
        let later = ConnectionLifecycle.nanoseconds(limits.partialMessageTimeout + limits.pingInterval + limits.pongTimeout)
        state.paused(now: later)
        #expect(state.tick(now: later) == nil)
        // Unpaused, the same silence is timed again.
        #expect(state.tick(now: later &+ ConnectionLifecycle.nanoseconds(limits.partialMessageTimeout)) != nil)
    }

    /// The share is 512 KiB. A body of 300 KiB arriving alone (with the parser's buffer)
    /// fits it; behind another of 300 KiB that is being handled, it does not.
    @Test func aBodyBeingHandledCountsForItsAddressUntilItIsAnswered() async throws {
        var limits = HTTPLimits()
        limits.maxIncompleteBytesPerAddress = 512 * Self.kib
        let held = Mutex<[HTTPResponder]>([])
        let dispatched = DispatchSemaphore(value: 0)
        let handler = ClosureHandler { request, responder in
            held.withLock { $0.append(responder) }
            dispatched.signal()
        }
        try await withServer(limits: limits, handler: handler) { port, server in
            let body = [UInt8](repeating: UInt8(ascii: "x"), count: 300 * Self.kib)
            func put(_ client: RawClient) throws {
                try client.send("PUT /data HTTP/1.1\r\nHost: h\r\nContent-Length: \(body.count)\r\n\r\n")
                try client.send(body)
            }
            let first = try RawClient(port: port)
            try put(first)
            #expect(dispatched.wait(timeout: .now() + 10) == .success)
            #expect(server.incomplete.held(by: "127.0.0.1") >= body.count)
            // A second body of the same address while the first is being handled.
            let second = try RawClient(port: port)
            try put(second)
            let refused = try #require(try second.readResponse())
            #expect(refused.status == 503 && refused.header("Retry-After") == "1")
            #expect(refused.text.contains("incomplete input"))
            #expect(server.stats.incompleteRefusals == 1)
            // Answered, the first body is released, and the address is served again.
            held.withLock { $0.first?.respond(.text("done")) }
            #expect(try first.readResponse()?.status == 200)
            #expect(server.incomplete.held(by: "127.0.0.1") == 0)
            let third = try RawClient(port: port)
            try put(third)
            #expect(dispatched.wait(timeout: .now() + 10) == .success)
            held.withLock { $0.last?.respond(.text("done")) }
            #expect(try third.readResponse()?.status == 200)
        }
    }
}
