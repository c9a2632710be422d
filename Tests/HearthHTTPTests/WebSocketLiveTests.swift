import Dispatch
import Synchronization
import Testing
@testable import HearthHTTP

/// Echoes text messages; "close" closes with 1000 "bye"; "flood N" sends N messages of 64 KiB;
/// "large N" sends N frames of 64 KiB as one unit (`send(texts:)`), then three small messages.
/// Records how the session ended.
final class EchoSocket: WebSocketHandler {
    private let session = Mutex<WebSocketSession?>(nil)
    let ended = Mutex<(count: Int, code: WebSocketCloseCode?)>((0, nil))
    let closedSignal = DispatchSemaphore(value: 0)
    /// Signalled when a "flood" has been handed to the session in full.
    let flooded = DispatchSemaphore(value: 0)

    func opened(_ session: WebSocketSession) {
        self.session.withLock { $0 = session }
    }

    func received(_ message: WebSocketMessage) {
        guard let session = session.withLock({ $0 }) else { return }
        switch message {
        case .text(let bytes):
            let text = String(decoding: bytes, as: UTF8.self)
            if text == "close" {
                session.close(.normal, reason: "bye")
            } else if text.hasPrefix("large "), let count = Int(text.dropFirst(6)) {
                // One unit of `count` frames of 64 KiB, then three small messages behind it.
                let chunk = [UInt8](repeating: UInt8(ascii: "l"), count: 64 * 1024)
                session.send(texts: Array(repeating: chunk, count: count))
                for i in 0..<3 { session.send(text: Array("after \(i)".utf8)) }
                flooded.signal()
            } else if text.hasPrefix("flood "), let count = Int(text.dropFirst(6)) {
                let chunk = [UInt8](repeating: UInt8(ascii: "f"), count: 64 * 1024)
                for _ in 0..<count { session.send(text: chunk) }
                flooded.signal()
            } else {
                session.send(text: bytes)
            }
        case .binary:
            session.close(.unsupportedData, reason: "Text only")
        }
    }

    func closed(code: WebSocketCloseCode?) {
        ended.withLock { $0 = ($0.count + 1, code) }
        session.withLock { $0 = nil }
        closedSignal.signal()
    }

    /// Waits (on the event, bounded by a safety timeout) until `closed` ran.
    func waitClosed() -> Bool {
        closedSignal.wait(timeout: .now() + 10) == .success
    }
}

/// Accepts WebSocket upgrades on any path with `EchoSocket`s; refuses other requests with the handshake's 400.
final class EchoServer: HTTPHandler {
    let limits: WebSocketLimits
    let sockets = Mutex<[EchoSocket]>([])

    init(limits: WebSocketLimits) {
        self.limits = limits
    }

    func handle(_ request: HTTPRequest, responder: HTTPResponder) {
        switch WebSocketHandshake.accept(request) {
        case .success(let head):
            let socket = EchoSocket()
            sockets.withLock { $0.append(socket) }
            responder.upgrade(head, limits: limits, handler: socket)
        case .failure(let refusal):
            responder.respond(refusal.response)
        }
    }

    var last: EchoSocket? { sockets.withLock { $0.last } }
}

@Suite("WebSocket: live sessions")
struct WebSocketLiveTests {
    static func withEchoServer(
        _ limits: WebSocketLimits = WebSocketLimits(), httpLimits: HTTPLimits = HTTPLimits(),
        _ body: (Int, HTTPServer, EchoServer) async throws -> Void
    ) async throws {
        let handler = EchoServer(limits: limits)
        try await withServer(limits: httpLimits, handler: handler) { port, server in
            try await body(port, server, handler)
        }
    }

    @Test func upgradeEchoFragmentsPingAndTheClosingHandshake() async throws {
        try await Self.withEchoServer { port, server, handler in
            let client = try RawClient(port: port)
            let head = try #require(try client.openWebSocket())
            #expect(head.status == 101)
            #expect(head.header("Sec-WebSocket-Accept") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
            #expect(head.header("Upgrade") == "websocket")
            #expect(head.header("Content-Length") == nil)
            try client.sendFrame(0x1, Array("hello".utf8))
            #expect(client.readFrame() == ServerFrame(fin: true, opcode: 0x1, payload: Array("hello".utf8)))
            try client.sendFrame(0x1, Array("frag".utf8), fin: false)
            try client.sendFrame(0x9, Array("are you there".utf8))
            try client.sendFrame(0x0, Array("mented".utf8))
            #expect(client.readFrame() == ServerFrame(fin: true, opcode: 0xA, payload: Array("are you there".utf8)))
            #expect(client.readFrame()?.text == "fragmented")
            #expect(server.stats.openWebSockets == 1)
            try client.sendFrame(0x8, [0x03, 0xE8] + Array("done".utf8))
            let close = try #require(client.readFrame())
            #expect(close.closeCode == 1000)
            #expect(client.isClosedByServer())
            let socket = try #require(handler.last)
            #expect(socket.waitClosed())
            #expect(socket.ended.withLock { $0.count } == 1)
            #expect(socket.ended.withLock { $0.code } == .normal)
        }
    }

    @Test func framesSentRightBehindTheHandshakeAreRead() async throws {
        try await Self.withEchoServer { port, _, _ in
            let client = try RawClient(port: port)
            let head = try #require(try client.openWebSocket(extra: clientFrame(0x1, Array("early".utf8))))
            #expect(head.status == 101)
            #expect(client.readFrame()?.text == "early")
        }
    }

    @Test(arguments: [
        (clientFrame(0x1, Array("x".utf8), mask: nil), UInt16(1002)),
        (clientFrame(0x3, []), 1002),
        (clientFrame(0x9, [UInt8](repeating: 0, count: 126)), 1002),
        (clientFrame(0x1, [0xC0, 0x80]), 1007),
        (clientFrame(0x1, [UInt8]("ok"), fin: false) + clientFrame(0x0, [0xFF]), 1007),
        (clientFrame(0x1, [UInt8](repeating: 0x61, count: 1001)), 1009),
        (clientFrame(0x8, [0x03]), 1002),
    ] as [([UInt8], UInt16)])
    func badFramesFailTheConnectionWithTheirCode(frame: [UInt8], code: UInt16) async throws {
        var limits = WebSocketLimits()
        limits.maxMessageBytes = 1000
        try await Self.withEchoServer(limits) { port, _, handler in
            let client = try RawClient(port: port)
            #expect(try client.openWebSocket()?.status == 101)
            try client.send(frame)
            let close = try #require(client.readFrame())
            #expect(close.closeCode == code)
            #expect(client.isClosedByServer())
            let socket = try #require(handler.last)
            #expect(socket.waitClosed())
            #expect(socket.ended.withLock { $0.code }?.rawValue == code)
        }
    }

    @Test func theApplicationClosesWithItsCodeAndReason() async throws {
        try await Self.withEchoServer { port, _, _ in
            let client = try RawClient(port: port)
            #expect(try client.openWebSocket()?.status == 101)
            try client.sendFrame(0x2, [1, 2, 3])
            let close = try #require(client.readFrame())
            #expect(close.closeCode == 1003)
            #expect(String(decoding: close.payload.dropFirst(2), as: UTF8.self) == "Text only")
        }
    }

    @Test func refusedHandshakesAnswerHTTPErrors() async throws {
        try await Self.withEchoServer { port, server, _ in
            let client = try RawClient(port: port)
            let refused = try #require(try client.openWebSocket(version: "8"))
            #expect(refused.status == 426 && refused.reason == "Upgrade Required")
            #expect(refused.header("Sec-WebSocket-Version") == "13")
            #expect(refused.header("Upgrade") == "websocket")
            let plain = try RawClient(port: port)
            try plain.send("GET /ws HTTP/1.1\r\nHost: h\r\n\r\n")
            let answer = try #require(try plain.readResponse())
            #expect(answer.status == 400)
            #expect(answer.text == #"{"error":"Expected a WebSocket upgrade request"}"#)
            #expect(server.stats.openWebSockets == 0)
        }
    }

    @Test func aPeerThatDoesNotReadIsClosedWith1008AfterWholeFrames() async throws {
        var limits = WebSocketLimits()
        limits.maxBufferedBytes = 256 * 1024
        try await Self.withEchoServer(limits) { port, server, handler in
            let client = try RawClient(port: port)
            #expect(try client.openWebSocket()?.status == 101)
            // 64 MiB asked for at once: far past the bound and the kernel's buffers.
            try client.sendFrame(0x1, Array("flood 1024".utf8))
            let socket = try #require(handler.last)
            // Read nothing until every send was made (on the I/O queue, so the overflow has
            // happened by then: 64 MiB is far more than the kernel's socket buffers take).
            #expect(socket.flooded.wait(timeout: .now() + 10) == .success)
            // What waits for the client stays near the bound, not the 64 MiB asked for.
            #expect(server.stats.unsentBytes <= limits.maxBufferedBytes + 64 * 1024 + 1024)
            var frames = 0
            var last: ServerFrame?
            while let frame = client.readFrame() {
                last = frame
                if frame.opcode == 0x1 {
                    frames += 1
                    #expect(frame.payload.count == 64 * 1024)
                }
            }
            #expect(frames > 0 && frames < 1024)
            #expect(last?.closeCode == 1008)
            #expect(socket.waitClosed())  // reported once the close frame was out
            #expect(socket.ended.withLock { $0.code } == .policyViolation)
            #expect(server.stats.streamOverflows == 1)
        }
    }

    /// The bound is on what waits behind the message going out: 16 MiB in 256 frames sent
    /// as one unit (the wire protocol's chunks of one message), 64 times the bound and more
    /// than the kernel takes while the peer waits, reach a peer that reads, with the
    /// messages queued behind it. Frame by frame, the frames past the bound ended the
    /// session with 1008.
    @Test func aMessageLargerThanTheBoundAndTheMessagesBehindItReachAPeerThatReads() async throws {
        var limits = WebSocketLimits()
        limits.maxBufferedBytes = 256 * 1024
        try await Self.withEchoServer(limits) { port, server, handler in
            let client = try RawClient(port: port)
            #expect(try client.openWebSocket()?.status == 101)
            try client.sendFrame(0x1, Array("large 256".utf8))
            let socket = try #require(handler.last)
            #expect(socket.flooded.wait(timeout: .now() + 10) == .success)  // all sent before a byte is read
            var large = 0
            var after: [String] = []
            while after.count < 3, let frame = client.readFrame() {
                #expect(frame.opcode == 0x1)
                if frame.payload.count == 64 * 1024 {
                    #expect(after.isEmpty)
                    large += 1
                } else {
                    after.append(String(decoding: frame.payload, as: UTF8.self))
                }
            }
            #expect(large == 256)
            #expect(after == ["after 0", "after 1", "after 2"])
            #expect(server.stats.streamOverflows == 0)
            try client.sendFrame(0x1, Array("still open".utf8))  // echoed: the session goes on
            #expect(client.readFrame()?.payload == Array("still open".utf8))
        }
    }

    @Test func silenceIsAnsweredWithPingsAndADeadPeerIsDropped() async throws {
        var limits = WebSocketLimits()
        limits.pingInterval = 0.05
        limits.pongTimeout = 0.05
        try await Self.withEchoServer(limits) { port, _, handler in
            let client = try RawClient(port: port)
            #expect(try client.openWebSocket()?.status == 101)
            let ping = try #require(client.readFrame())
            #expect(ping.opcode == 0x9)
            try client.sendFrame(0xA, ping.payload)  // answered: the session lives on
            let second = try #require(client.readFrame())
            #expect(second.opcode == 0x9)
            // Not answered: the connection is dropped without a close frame.
            #expect(client.readFrame() == nil)
            let socket = try #require(handler.last)
            #expect(socket.waitClosed())
            #expect(socket.ended.withLock { $0.code } == nil)
        }
    }

    @Test func shutdownClosesSessionsWith1001() async throws {
        let handler = EchoServer(limits: WebSocketLimits())
        let server = HTTPServer(configuration: HTTPServerConfiguration(host: "127.0.0.1", port: 0, ioQueueCount: 2), handler: handler)
        let port = try server.start()
        let client = try RawClient(port: port)
        #expect(try client.openWebSocket()?.status == 101)
        try client.sendFrame(0x1, Array("up".utf8))
        #expect(client.readFrame()?.text == "up")
        // The callback form: this test's thread blocks in socket reads, and the cooperative
        // pool (which an `async let` would need) has only as many threads as cores.
        let done = DispatchSemaphore(value: 0)
        server.shutdown(gracePeriod: 5) { done.signal() }
        let close = try #require(client.readFrame())
        #expect(close.closeCode == 1001)
        try client.sendFrame(0x8, [0x03, 0xE9])
        #expect(client.isClosedByServer())
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(server.stats.openWebSockets == 0)
    }
}
