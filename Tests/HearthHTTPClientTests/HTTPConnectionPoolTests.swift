import Dispatch
import HearthTesting
import Synchronization
import Testing
@testable import HearthHTTPClient

/// Connections kept between requests: against real listeners on 127.0.0.1 port 0 that
/// count the connections they accept and the requests they read, and the response
/// reader's decision from literals.
@Suite struct HTTPConnectionPoolTests {
    /// A listener serving requests on each connection until `reply` says to stop (nil: close
    /// without answering), counting connections and requests.
    final class Server: Sendable {
        final class Tally: Sendable {
            let connections = Mutex(0)
            let requests = Mutex<[ReceivedRequest]>([])
        }
        let tally = Tally()
        let listener: LoopbackListener

        /// `reply(request, its index on its connection)`: the raw answer, or nil to close.
        init(_ reply: @escaping @Sendable (ReceivedRequest, Int) -> [UInt8]?) throws {
            let tally = self.tally
            listener = try LoopbackListener { socket in
                tally.connections.withLock { $0 += 1 }
                var index = 0
                while let request = socket.readRequest() {
                    tally.requests.withLock { $0.append(request) }
                    guard let answer = reply(request, index) else { return }
                    guard (try? socket.send(bytes: answer)) != nil else { return }
                    index += 1
                }
            }
        }

        var accepted: Int { tally.connections.withLock { $0 } }
        var received: [ReceivedRequest] { tally.requests.withLock { $0 } }
        var url: HTTPURL { try! HTTPURL("http://127.0.0.1:\(listener.port)/hook") }
    }

    static func ok(_ body: String) -> [UInt8] { Array("HTTP/1.1 200 OK\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)".utf8) }

    func post(_ client: HTTPClient, _ server: Server, _ text: String) throws -> HTTPClientResponse {
        try client.send(HTTPClientRequest(method: "POST", url: server.url, body: Array(text.utf8)))
    }

    @Test func aPooledClientSendsRequestsOneAfterAnotherOnOneConnection() throws {
        let server = try Server { request, _ in Self.ok("echo " + request.text) }
        defer { server.listener.stop() }
        let pool = HTTPConnectionPool()
        let client = HTTPClient(timeoutSeconds: 10, pool: pool)
        for index in 0..<20 {
            let response = try post(client, server, "r\(index)")
            #expect(response.status == 200 && String(decoding: response.body, as: UTF8.self) == "echo r\(index)")
        }
        #expect(server.accepted == 1)
        #expect(server.received.count == 20 && server.received.allSatisfy { $0.header("connection") == nil })
        #expect(pool.counts == HTTPConnectionPool.Counts(reused: 19, discarded: 0))
        #expect(pool.idleCount == 1)
        pool.closeAll()
        #expect(pool.idleCount == 0)

        // Without a pool: a connection each, each request saying so.
        let plain = try Server { request, _ in Self.ok(request.text) }
        defer { plain.listener.stop() }
        for index in 0..<3 { _ = try post(HTTPClient(timeoutSeconds: 10), plain, "p\(index)") }
        #expect(plain.accepted == 3 && plain.received.allSatisfy { $0.header("connection") == "close" })
    }

    /// Each kind of answer after which the connection cannot carry another request: the
    /// next request opens a new one, and nothing waits in the pool.
    @Test(arguments: [
        "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok",
        "HTTP/1.1 200 OK\r\nConnection: keep-alive, Close\r\nContent-Length: 2\r\n\r\nok",
        "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok",
        "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokEXTRA",  // bytes past the answer
    ])
    func answersThatEndTheirConnectionAreNotKept(_ raw: String) throws {
        let server = try Server { _, _ in Array(raw.utf8) }
        defer { server.listener.stop() }
        let pool = HTTPConnectionPool()
        let client = HTTPClient(timeoutSeconds: 10, pool: pool)
        for _ in 0..<3 {
            let response = try post(client, server, "x")
            #expect(response.status == 200 && String(decoding: response.body, as: UTF8.self) == "ok")
            #expect(pool.idleCount == 0)
        }
        #expect(server.accepted == 3 && server.received.count == 3)
        #expect(pool.counts.reused == 0)
    }

    /// A body delimited by the end of the stream ends its connection too (the server closes
    /// to end it).
    @Test func aCloseDelimitedBodyIsNotKept() throws {
        let closing = try LoopbackListener { socket in
            guard socket.readRequest() != nil else { return }
            try? socket.send(bytes: Array("HTTP/1.1 200 OK\r\n\r\nto the end".utf8))
        }
        defer { closing.stop() }
        let pool = HTTPConnectionPool()
        let response = try HTTPClient(timeoutSeconds: 10, pool: pool).send(
            HTTPClientRequest(url: try HTTPURL("http://127.0.0.1:\(closing.port)/")))
        #expect(String(decoding: response.body, as: UTF8.self) == "to the end")
        #expect(pool.idleCount == 0)
    }

    /// A server that answers one request per connection and then closes it (with HTTP/1.1
    /// framing, so the client keeps it): every later request finds its pooled connection
    /// closed, either while idle or as it is sent, and goes out on a new one. Each request
    /// reaches the server once.
    @Test func connectionsTheServerClosedAreReplacedAndNothingIsSentTwice() throws {
        let tally = Server.Tally()
        let listener = try LoopbackListener { socket in
            tally.connections.withLock { $0 += 1 }
            guard let request = socket.readRequest() else { return }
            tally.requests.withLock { $0.append(request) }
            try? socket.send(bytes: Self.ok(request.text))
        }
        defer { listener.stop() }
        let pool = HTTPConnectionPool()
        let client = HTTPClient(timeoutSeconds: 10, pool: pool)
        let url = try HTTPURL("http://127.0.0.1:\(listener.port)/")
        for index in 0..<30 {
            let response = try client.send(HTTPClientRequest(method: "POST", url: url, body: Array("r\(index)".utf8)))
            #expect(String(decoding: response.body, as: UTF8.self) == "r\(index)")
        }
        #expect(tally.connections.withLock { $0 } == 30)
        #expect(tally.requests.withLock { $0.map(\.text) } == (0..<30).map { "r\($0)" })
        // Each later request found the one before's connection: taken and found closed as
        // it was sent, or seen closed while idle and discarded.
        #expect(pool.counts.reused + pool.counts.discarded == 29)
    }

    /// An idle connection with bytes nobody asked for is not used: it is closed, and the
    /// request goes out on a new connection, never after those bytes.
    @Test func anIdleConnectionWithSomethingToReadIsDiscarded() throws {
        let (answered, sent) = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0))
        let tally = Server.Tally()
        let listener = try LoopbackListener { socket in
            let connection = tally.connections.withLock { $0 += 1; return $0 }
            while let request = socket.readRequest() {
                tally.requests.withLock { $0.append(request) }
                guard (try? socket.send(bytes: Self.ok(request.text))) != nil else { return }
                if connection == 1 {  // then a byte after the answer, once the client has it
                    answered.wait()
                    try? socket.send(bytes: Array("X".utf8))
                    sent.signal()
                }
            }
        }
        defer { listener.stop() }
        let pool = HTTPConnectionPool()
        let client = HTTPClient(timeoutSeconds: 10, pool: pool)
        let url = try HTTPURL("http://127.0.0.1:\(listener.port)/")
        #expect(try client.send(HTTPClientRequest(method: "POST", url: url, body: Array("a".utf8))).body == Array("a".utf8))
        answered.signal()
        sent.wait()
        #expect(try client.send(HTTPClientRequest(method: "POST", url: url, body: Array("b".utf8))).body == Array("b".utf8))
        #expect(tally.connections.withLock { $0 } == 2)
        #expect(tally.requests.withLock { $0.map(\.text) } == ["a", "b"])
        #expect(pool.counts == HTTPConnectionPool.Counts(reused: 0, discarded: 1))
    }

    /// The server takes the second request on the connection and closes without a byte of
    /// answer: the client sends it once more on a new connection (the server sees it twice,
    /// the documented cost), and the answer from there is the one returned.
    @Test func aRequestUnansweredOnAReusedConnectionIsSentOnceMoreOnANewOne() throws {
        let server = try Server { request, index in index == 1 ? nil : Self.ok("took " + request.text) }
        defer { server.listener.stop() }
        let pool = HTTPConnectionPool()
        let client = HTTPClient(timeoutSeconds: 10, pool: pool)
        #expect(String(decoding: try post(client, server, "a").body, as: UTF8.self) == "took a")
        #expect(String(decoding: try post(client, server, "b").body, as: UTF8.self) == "took b")
        #expect(server.accepted == 2)
        #expect(server.received.map(\.text) == ["a", "b", "b"])
        // On a new connection the same failure is the caller's: no second try there.
        let once = try Server { _, _ in nil }
        defer { once.listener.stop() }
        #expect(throws: HTTPClientError.self) { try post(HTTPClient(timeoutSeconds: 10, pool: HTTPConnectionPool()), once, "c") }
        #expect(once.accepted == 1 && once.received.count == 1)
    }

    /// A reused connection whose answer does not come in time is a timeout, not sent again:
    /// the server may be working on it.
    @Test func aTimeoutOnAReusedConnectionIsNotSentAgain() throws {
        let release = DispatchSemaphore(value: 0)
        let server = try Server { request, index in
            if index == 1 { release.wait() }
            return Self.ok(request.text)
        }
        defer {
            release.signal()
            server.listener.stop()
        }
        let pool = HTTPConnectionPool()
        let client = HTTPClient(timeoutSeconds: 1, pool: pool)
        _ = try post(client, server, "a")
        do {
            _ = try post(client, server, "b")
            Issue.record("an answer from a server that held it")
        } catch {
            #expect((error as? HTTPClientError)?.isTimeout == true)
        }
        #expect(server.accepted == 1 && server.received.map(\.text) == ["a", "b"])
        #expect(pool.idleCount == 0)
    }

    /// Idle past `maxIdleMilliseconds` (on the pool's own clock): not used, and `prune`
    /// closes it.
    @Test func connectionsIdleTooLongAreClosed() throws {
        let server = try Server { request, _ in Self.ok(request.text) }
        defer { server.listener.stop() }
        let now = Mutex<Int64>(0)
        let pool = HTTPConnectionPool(maxIdleMilliseconds: 1_000, clock: { now.withLock { $0 } })
        let client = HTTPClient(timeoutSeconds: 10, pool: pool)
        _ = try post(client, server, "a")
        now.withLock { $0 = 1_000 }  // exactly the limit: still kept
        _ = try post(client, server, "b")
        #expect(server.accepted == 1 && pool.counts.reused == 1)
        now.withLock { $0 = 2_001 }
        _ = try post(client, server, "c")
        #expect(server.accepted == 2 && pool.counts == HTTPConnectionPool.Counts(reused: 1, discarded: 1))
        #expect(pool.idleCount == 1)
        pool.prune()
        #expect(pool.idleCount == 1)  // put back at 2,001: not expired
        now.withLock { $0 = 3_002 }
        pool.prune()
        #expect(pool.idleCount == 0 && pool.counts.discarded == 2)
    }

    /// At most `maxIdle` wait; the one idle longest goes first.
    @Test func pastMaxIdleTheOldestIsClosed() throws {
        let server = try Server { request, _ in Self.ok(request.text) }
        defer { server.listener.stop() }
        let pool = HTTPConnectionPool(maxIdle: 2)
        let origin = HTTPConnectionPool.Origin(isTLS: false, host: "127.0.0.1", port: server.listener.port, caFile: nil, timeoutSeconds: 10)
        let opened = try (0..<3).map { _ in try OutgoingConnection(host: "127.0.0.1", port: server.listener.port, timeoutSeconds: 10) }
        for connection in opened { pool.give(connection, origin: origin) }
        #expect(pool.idleCount == 2 && pool.counts.discarded == 1)
        // Newest first.
        #expect(pool.take(origin)?.fd == opened[2].fd)
        #expect(pool.take(origin)?.fd == opened[1].fd)
        #expect(pool.take(origin) == nil)
        // Another origin (here: another timeout) never gets them.
        pool.give(opened[1], origin: origin)
        var other = origin
        other.timeoutSeconds = 5
        #expect(pool.take(other) == nil && pool.idleCount == 1)
    }

    @Test func theReaderKeepsAConnectionOnlyAfterAFramedHTTP11Answer() throws {
        func keeps(_ raw: String, head: Bool = false) throws -> Bool {
            var bytes = Array(raw.utf8)[...]
            var reader = ResponseReader(limit: 1 << 16, deadline: nil) { chunk in
                let count = min(chunk.count, bytes.count, 7)  // a few bytes per read
                chunk.replaceSubrange(0..<count, with: bytes.prefix(count))
                bytes = bytes.dropFirst(count)
                return count
            }
            _ = try reader.response(forHEAD: head)
            return reader.keepsConnection
        }
        #expect(try keeps("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
        #expect(try keeps("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n"))
        #expect(try keeps("HTTP/1.1 204 No Content\r\n\r\n"))
        #expect(try keeps("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"))
        #expect(try keeps("HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n", head: true))
        #expect(try keeps("HTTP/1.1 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n"))
        #expect(try !keeps("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"))
        #expect(try !keeps("HTTP/1.1 200 OK\r\nconnection: Upgrade\r\nConnection:  close \r\nContent-Length: 0\r\n\r\n"))
        #expect(try !keeps("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n"))
        #expect(try !keeps("HTTP/1.1 200 OK\r\n\r\nuntil the end"))
        #expect(try !keeps("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 200 OK\r\n"))
    }
}
