import Dispatch
import Glibc
import HearthTesting
import Testing
@testable import HearthHTTP

/// One client trying to exhaust the server: unread responses, slow bodies, many
/// connections from one address. Live, on 127.0.0.1 port 0, with small limits.
@Suite("HTTPServer: exhaustion", .serialized)
struct HTTPServerExhaustionTests {
    static let bigBody = [UInt8](repeating: UInt8(ascii: "x"), count: 8 * 1024 * 1024)

    /// Sets a client's receive buffer: small so the kernel holds little of what it does not
    /// read, then large again before reading (a 4 KiB window with delayed ACKs moves 8 MiB
    /// in minutes, not milliseconds).
    static func setReceiveBuffer(_ client: RawClient, bytes: Int32) {
        var size = bytes
        setsockopt(client.fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
    }

    @Test func unreadResponsesAreBoundedInTotal() async throws {
        var limits = HTTPLimits()
        limits.maxUnsentBytes = 16 * 1024 * 1024
        limits.writeTimeout = 300  // the readers below must not be cut off while others read
        let answered = DispatchSemaphore(value: 0)
        let handler = ClosureHandler { request, responder in
            // Synchronous on the I/O queue: when `respond` returns, the response is queued
            // and counted, so the test may look at the counters.
            if request.path == "/big" {
                responder.respond(HTTPResponse(status: 200, headers: HTTPHeaders([("Content-Type", "text/plain")]), body: Self.bigBody))
            } else {
                responder.respond(.text("small"))
            }
            answered.signal()
        }
        try await withServer(limits: limits, handler: handler) { port, server in
            var clients: [RawClient] = []
            var peak = 0
            for _ in 0..<12 {
                let client = try RawClient(port: port)
                Self.setReceiveBuffer(client, bytes: 4096)
                try client.send("GET /big HTTP/1.1\r\nHost: h\r\n\r\n")  // and never read, for now
                answered.wait()
                peak = max(peak, server.stats.unsentBytes)
                clients.append(client)
            }
            // 96 MiB asked for; at most the bound plus one response waits in the server.
            #expect(peak <= limits.maxUnsentBytes + Self.bigBody.count)
            #expect(server.stats.unsentRefusals > 0)
            // Small answers still go out while the bound is reached.
            let probe = try RawClient(port: port)
            try probe.send("GET /small HTTP/1.1\r\nHost: h\r\n\r\n")
            answered.wait()
            #expect(try probe.readResponse()?.status == 200)
            // Every client was answered either the whole body or a 503 that says when to
            // retry. Only the heads are read: through a 4 KiB window an 8 MiB body takes
            // minutes (the window stays clamped even if the buffer grows again).
            var statuses: [Int] = []
            for client in clients {
                let head = try #require(try client.readResponse(head: true))
                statuses.append(head.status)
                if head.status == 200 { #expect(head.header("Content-Length") == String(Self.bigBody.count)) }
                if head.status == 503 { #expect(head.header("Retry-After") == "1") }
            }
            #expect(Set(statuses) == [200, 503])
            // Closing the readers that never read frees what they pinned ...
            clients.removeAll()
            try await waitUntil("the closed readers' bytes freed", showing: "\(server.stats.unsentBytes) unsent") {
                server.stats.unsentBytes == 0
            }
            // ... and a client that reads gets the whole large body again.
            let reader = try RawClient(port: port)
            try reader.send("GET /big HTTP/1.1\r\nHost: h\r\n\r\n")
            answered.wait()
            let whole = try #require(try reader.readResponse())
            #expect(whole.status == 200)
            #expect(whole.body == Self.bigBody)
        }
    }

    @Test func aLaggingStreamIsEndedWhenTheTotalIsReachedEvenUnderItsOwnBound() async throws {
        var limits = HTTPLimits()
        limits.maxUnsentBytes = 1024 * 1024
        // The pinned response must stay unsent however long this test waits to be
        // scheduled: past the default 30 s the write timeout would close its connection.
        limits.writeTimeout = 300
        let answered = DispatchSemaphore(value: 0)
        let sent = DispatchSemaphore(value: 0)
        let cancel = Array("event: cancel\ndata: null\n\n".utf8)
        let eventBytes = 256 * 1024
        let handler = ClosureHandler { request, responder in
            if request.path == "/big" {
                responder.respond(HTTPResponse(status: 200, headers: HTTPHeaders([("Content-Type", "text/plain")]), body: Self.bigBody))
                answered.signal()
                return
            }
            // A per-stream bound (64 MiB) far above everything sent: only the total can end it.
            let head = HTTPResponse(status: 200, headers: HTTPHeaders([("Content-Type", "text/event-stream")]), body: [])
            responder.openStream(head, options: HTTPStreamOptions(maxBufferedBytes: 64 << 20, overflowBytes: cancel)) { stream in
                guard let stream else { sent.signal(); return }
                DispatchQueue.global().async {
                    for i in 0..<32 {
                        stream.send(Array("data: \(i):".utf8) + [UInt8](repeating: UInt8(ascii: "x"), count: eventBytes) + Array("\n\n".utf8))
                    }
                    stream.connection.loop.queue.async { sent.signal() }
                }
            }
        }
        try await withServer(limits: limits, handler: handler) { port, server in
            // A client that does not read pins more than the total bound.
            let pinning = try RawClient(port: port)
            Self.setReceiveBuffer(pinning, bytes: 4096)
            try pinning.send("GET /big HTTP/1.1\r\nHost: h\r\n\r\n")
            answered.wait()
            // The I/O queue accounts the queued response once the handler has returned.
            try await waitUntil("the pinned response counted as unsent", showing: "\(server.stats.unsentBytes) unsent") {
                server.stats.unsentBytes > limits.maxUnsentBytes
            }
            let reader = try RawClient(port: port)
            try reader.send("GET /s HTTP/1.1\r\nHost: h\r\n\r\n")
            sent.wait()
            let body = String(decoding: reader.readUntilClose(), as: UTF8.self)
            #expect(body.hasSuffix("event: cancel\ndata: null\n\n"))
            #expect(server.stats.streamOverflows == 1)
            #expect(server.stats.unsentRefusals >= 1)
        }
    }

    @Test func connectionsPerAddressAreCapped() async throws {
        var limits = HTTPLimits()
        limits.maxConnectionsPerAddress = 3
        try await withServer(limits: limits) { port, server in
            var kept: [RawClient] = []
            for _ in 0..<3 {
                let client = try RawClient(port: port)
                try client.send("GET /k HTTP/1.1\r\nHost: h\r\n\r\n")
                #expect(try client.readResponse()?.status == 200)
                kept.append(client)
            }
            let fourth = try RawClient(port: port)
            try fourth.send("GET /k HTTP/1.1\r\nHost: h\r\n\r\n")
            let refused = try #require(try fourth.readResponse())
            #expect(refused.status == 429)
            #expect(String(decoding: refused.body, as: UTF8.self) == #"{"error":"Too many requests"}"#)
            #expect(fourth.readUntilClose().isEmpty)
            #expect(server.stats.addressRefusals == 1)
            // A closed connection frees its place.
            kept.removeFirst()
            try await waitUntil("the closed connection's place freed", showing: "\(server.addresses.count("127.0.0.1")) counted") {
                server.addresses.count("127.0.0.1") <= 2
            }
            let again = try RawClient(port: port)
            try again.send("GET /k HTTP/1.1\r\nHost: h\r\n\r\n")
            #expect(try again.readResponse()?.status == 200)
        }
    }

    @Test func behindATrustedProxyTheCapIsPerForwardedClient() async throws {
        var limits = HTTPLimits()
        limits.maxConnectionsPerAddress = 2
        var configuration = HTTPServerConfiguration(host: "127.0.0.1", port: 0, ioQueueCount: 2, limits: limits)
        configuration.trustedProxies = ["127.0.0.1"]
        let server = HTTPServer(configuration: configuration, handler: echoHandler)
        let port = try server.start()
        func request(_ client: RawClient, from address: String) throws -> Int? {
            try client.send("GET /k HTTP/1.1\r\nHost: h\r\nX-Forwarded-For: \(address)\r\n\r\n")
            return try client.readResponse()?.status
        }
        // The proxy's own address is not capped: five connections from it.
        let connections = try (0..<5).map { _ in try RawClient(port: port) }
        #expect(try request(connections[0], from: "203.0.113.5") == 200)
        #expect(try request(connections[1], from: "203.0.113.5") == 200)
        #expect(try request(connections[2], from: "203.0.113.5") == 429)
        #expect(try request(connections[3], from: "203.0.113.6") == 200)
        // A kept-alive proxy connection that carries another client moves its count.
        #expect(try request(connections[1], from: "203.0.113.7") == 200)
        #expect(try request(connections[4], from: "203.0.113.5") == 200)
        #expect(server.addresses.count("127.0.0.1") == 0)
        await server.shutdown(gracePeriod: 1)
    }

    @Test func aTrickledBodyIsCutOffByTheRateFloor() async throws {
        var limits = HTTPLimits()
        limits.bodyReadTimeout = 0.3
        limits.minBodyBytesPerSecond = 1000
        try await withServer(limits: limits) { port, server in
            let client = try RawClient(port: port)
            try client.send("PUT /slow HTTP/1.1\r\nHost: h\r\nContent-Length: 1000\r\n\r\n")
            // One byte every 50 ms: never idle for 0.3 s, but 20 B/s against a 1,000 B/s floor.
            // Bounded: 200 bytes (10 s) at most; the server must answer long before.
            var answered = false
            for _ in 0..<200 {
                do { try client.send("a") } catch { answered = true; break }
                var pollfd = Glibc.pollfd(fd: client.fd, events: Int16(POLLIN), revents: 0)
                if poll(&pollfd, 1, 50) > 0 { answered = true; break }  // the slow client's pace
            }
            #expect(answered)
            let response = try #require(try client.readResponse())
            #expect(response.status == 408)
        }
    }
}
