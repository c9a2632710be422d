import Dispatch
import Synchronization
import Testing
@testable import HearthHTTP

/// Input held for incomplete requests and messages is bounded, against
/// a live server with small bounds: fragments without FIN on several sockets, a request
/// body still arriving, a message that stops arriving. A ping after a fragment, answered
/// with a pong, shows the server has taken everything before it (no sleeps).
@Suite("Incomplete input: live")
struct IncompleteInputLiveTests {
    static let kib = 1024

    /// Opens a session and sends `bytes` of a text message without its FIN; when `confirmed`,
    /// returns once the server has read them (its pong to a ping sent behind them).
    static func holdingSession(port: Int, bytes: Int, confirmed: Bool = true) throws -> RawClient {
        let client = try RawClient(port: port)
        #expect(try client.openWebSocket()?.status == 101)
        try client.sendFrame(0x1, [UInt8](repeating: UInt8(ascii: "a"), count: bytes), fin: false)
        guard confirmed else { return client }
        try client.sendFrame(0x9, Array("held".utf8))
        #expect(client.readFrame()?.opcode == 0xA)
        return client
    }

    static func closeReason(_ frame: ServerFrame?) -> String {
        String(decoding: frame?.payload.dropFirst(2) ?? [], as: UTF8.self)
    }

    @Test func fragmentsWithoutFINPastTheAddressShareClose1008AndOthersAreServed() async throws {
        var limits = HTTPLimits()
        limits.maxIncompleteBytesPerAddress = 512 * Self.kib
        try await IncompleteInputLiveTests.withEcho(limits) { port, server in
            let first = try Self.holdingSession(port: port, bytes: 200 * Self.kib)
            // Counted as allocated: the fragment's bytes in the buffer they arrived in (which
            // grew by doubling), and a small receive buffer.
            let held = server.incomplete.held(by: "127.0.0.1")
            #expect(held >= 200 * Self.kib && held <= 2 * 200 * Self.kib)
            let second = try Self.holdingSession(port: port, bytes: 400 * Self.kib, confirmed: false)
            let close = second.readFrame()
            #expect(close?.closeCode == 1008)
            #expect(Self.closeReason(close) == HTTPConnection.addressFullReason)
            // Small messages are served whatever the address holds.
            let small = try RawClient(port: port)
            #expect(try small.openWebSocket()?.status == 101)
            try small.sendFrame(0x1, Array("hi".utf8))
            #expect(small.readFrame()?.text == "hi")
            // The first finishes its message: echoed whole, and nothing is held any more.
            try first.sendFrame(0x0, Array("!".utf8))
            #expect(first.readFrame()?.payload.count == 200 * Self.kib + 1)
            try first.sendFrame(0x9, [])
            #expect(first.readFrame()?.opcode == 0xA)
            #expect(server.incomplete.held(by: "127.0.0.1") == 0)
            #expect(server.stats.incompleteBytes == 0 && server.stats.incompleteRefusals == 1)
        }
    }

    @Test func manyPartialMessagesPastTheServerBoundClose1013() async throws {
        var limits = HTTPLimits()
        limits.maxIncompleteBytes = 400 * Self.kib
        try await IncompleteInputLiveTests.withEcho(limits) { port, server in
            var held: [RawClient] = []
            for _ in 0..<3 { held.append(try Self.holdingSession(port: port, bytes: 90 * Self.kib)) }
            #expect(server.stats.incompleteBytes >= 270 * Self.kib && server.stats.incompleteBytes <= 2 * 270 * Self.kib)
            let over = try Self.holdingSession(port: port, bytes: 200 * Self.kib, confirmed: false)
            let close = over.readFrame()
            #expect(close?.closeCode == 1013)
            #expect(Self.closeReason(close) == HTTPConnection.serverFullReason)
            #expect(over.readFrame() == nil)  // then the connection ends
            for client in held {
                try client.sendFrame(0x0, [], fin: true)
                #expect(client.readFrame()?.payload.count == 90 * Self.kib)
            }
        }
    }

    /// A frame whose payload has not all come is held too (not only whole fragments).
    @Test func aFrameStillArrivingCountsAndARequestBodyIsRefusedWith503() async throws {
        var limits = HTTPLimits()
        limits.maxIncompleteBytes = 128 * Self.kib
        try await IncompleteInputLiveTests.withEcho(limits) { port, server in
            let body = try RawClient(port: port)
            try body.send("PUT /data HTTP/1.1\r\nHost: h\r\nContent-Length: 1048576\r\n\r\n")
            try body.send([UInt8](repeating: UInt8(ascii: "x"), count: 200 * Self.kib))
            let refused = try #require(try body.readResponse())
            #expect(refused.status == 503 && refused.header("Retry-After") == "1")
            #expect(refused.text.contains("incomplete input"))

            let frame = try RawClient(port: port)
            #expect(try frame.openWebSocket()?.status == 101)
            let whole = clientFrame(0x1, [UInt8](repeating: UInt8(ascii: "d"), count: 400 * Self.kib))
            try frame.send(Array(whole.prefix(200 * Self.kib)))
            #expect(frame.readFrame()?.closeCode == 1013)
            #expect(server.stats.incompleteRefusals == 2)
        }
    }

    /// The default share of an address holds one largest message as allocated (its receive
    /// buffer grows to twice its size while it arrives), so it is never refused alone.
    @Test func theLargestMessageFitsTheDefaultShare() async throws {
        try await IncompleteInputLiveTests.withEcho(HTTPLimits()) { port, server in
            // A debug build checks and echoes 16 MiB: on a loaded machine that is longer
            // than the client's usual 10 s safety net.
            let client = try RawClient(port: port, timeout: 120)
            #expect(try client.openWebSocket()?.status == 101)
            let size = WebSocketLimits.defaultMaxMessageBytes - 16
            try client.send(clientFrame(0x1, [UInt8](repeating: UInt8(ascii: "m"), count: size), mask: [0, 0, 0, 0]))
            // Slower than `WebSocketLimits.pingInterval`, the server pings first: a ping
            // is not the answer.
            var echo = client.readFrame()
            while echo?.opcode == 0x9 { echo = client.readFrame() }
            #expect(echo?.opcode == 0x1)
            #expect(echo?.payload.count == size)
            #expect(server.stats.incompleteRefusals == 0)
        }
    }

    @Test func aMessageThatStopsArrivingIsDroppedWith1008() async throws {
        var webSocket = WebSocketLimits()
        webSocket.partialMessageTimeout = 0.05
        try await IncompleteInputLiveTests.withEcho(HTTPLimits(), webSocket) { port, server in
            let client = try RawClient(port: port)
            #expect(try client.openWebSocket()?.status == 101)
            try client.sendFrame(0x1, Array("part".utf8), fin: false)
            let close = client.readFrame()
            #expect(close?.closeCode == 1008)
            #expect(Self.closeReason(close) == "Message incomplete for 50 ms; send each message whole without pausing")
            #expect(server.stats.incompleteRefusals == 1)
        }
    }

    /// A WebSocket session's access record counts what it received, so the server's
    /// memory trimmer sees sessions that took in (or were refused holding) large messages.
    @Test func aSessionsAccessRecordCountsTheBytesItReceived() async throws {
        let records = Mutex<[HTTPAccessRecord]>([])
        let ended = DispatchSemaphore(value: 0)
        var configuration = HTTPServerConfiguration(host: "127.0.0.1", port: 0, ioQueueCount: 1)
        configuration.accessLog = { record in
            records.withLock { $0.append(record) }
            ended.signal()
        }
        let server = HTTPServer(configuration: configuration, handler: EchoServer(limits: WebSocketLimits()))
        let port = try server.start()
        let client = try RawClient(port: port)
        #expect(try client.openWebSocket()?.status == 101)
        let frames = clientFrame(0x1, Array("hello".utf8)) + clientFrame(0x1, Array("close".utf8))
        try client.send(frames)
        #expect(client.readFrame()?.text == "hello")
        #expect(client.readFrame()?.closeCode == 1000)
        #expect(ended.wait(timeout: .now() + 10) == .success)
        let record = try #require(records.withLock { $0.first })
        #expect(record.status == 101 && record.requestBytes == frames.count)
        await server.shutdown(gracePeriod: 1)
    }

    static func withEcho(
        _ limits: HTTPLimits, _ webSocket: WebSocketLimits = WebSocketLimits(), _ body: (Int, HTTPServer) async throws -> Void
    ) async throws {
        try await withServer(limits: limits, handler: EchoServer(limits: webSocket)) { port, server in
            try await body(port, server)
        }
    }
}
