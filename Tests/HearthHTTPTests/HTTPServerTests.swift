#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Testing
@testable import HearthHTTP
import HearthSystem

/// Live tests: a real server on 127.0.0.1, port 0, and a raw socket client.
@Suite("HTTPServer: live")
struct HTTPServerTests {
    @Test func keepAliveServesTwoRequestsOnOneConnection() async throws {
        try await withServer { port, server in
            let client = try RawClient(port: port)
            try client.send("GET /one HTTP/1.1\r\nHost: h\r\n\r\n")
            let first = try #require(try client.readResponse())
            #expect(first.status == 200)
            #expect(first.text == "GET /one ")
            #expect(first.header("Content-Length") == "9")
            #expect(first.header("Connection") == nil)
            try client.send("GET /two HTTP/1.1\r\nHost: h\r\n\r\n")
            let second = try #require(try client.readResponse())
            #expect(second.text == "GET /two ")
            #expect(server.stats.totalRequests == 2)
            #expect(server.stats.openConnections == 1)
        }
    }

    @Test func pipelinedRequestsAreAnsweredInOrder() async throws {
        try await withServer { port, _ in
            let client = try RawClient(port: port)
            try client.send("GET /a HTTP/1.1\r\nHost: h\r\n\r\nPOST /b HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\r\nhi"
                            + "GET /c HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n")
            #expect(try client.readResponse()?.text == "GET /a ")
            #expect(try client.readResponse()?.text == "POST /b hi")
            let last = try #require(try client.readResponse())
            #expect(last.text == "GET /c ")
            #expect(last.header("Connection") == "close")
            #expect(client.isClosedByServer())
        }
    }

    @Test func pipelinedAsyncResponsesKeepTheirOrder() async throws {
        let handler = ClosureHandler { request, responder in
            let delay = request.path == "/slow" ? 0.1 : 0
            DispatchQueue.global().asyncAfter(deadline: .now() + delay) {
                responder.respond(.text(request.path))
            }
        }
        try await withServer(handler: handler) { port, _ in
            let client = try RawClient(port: port)
            try client.send("GET /slow HTTP/1.1\r\nHost: h\r\n\r\nGET /fast HTTP/1.1\r\nHost: h\r\n\r\n")
            #expect(try client.readResponse()?.text == "/slow")
            #expect(try client.readResponse()?.text == "/fast")
        }
    }

    @Test func handlerMayRespondLaterFromAnotherQueue() async throws {
        let worker = DispatchQueue(label: "test.worker")
        let handler = ClosureHandler { request, responder in
            worker.async {
                responder.respond(.text("later \(request.path)", status: 201))
                responder.respond(.text("a second answer is ignored"))
            }
        }
        try await withServer(handler: handler) { port, _ in
            let client = try RawClient(port: port)
            for path in ["/x", "/y"] {
                try client.send("GET \(path) HTTP/1.1\r\nHost: h\r\n\r\n")
                let response = try #require(try client.readResponse())
                #expect(response.status == 201)
                #expect(response.text == "later \(path)")
            }
        }
    }

    @Test func expectContinueGets100BeforeTheBody() async throws {
        try await withServer { port, _ in
            let client = try RawClient(port: port)
            try client.send("POST /upload HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n")
            let interim = try #require(try client.readResponse())
            #expect(interim.status == 100)
            try client.send("hello")
            let final = try #require(try client.readResponse())
            #expect(final.status == 200)
            #expect(final.text == "POST /upload hello")
        }
    }

    @Test func headHasTheLengthOfGetButNoBody() async throws {
        try await withServer { port, _ in
            let client = try RawClient(port: port)
            try client.send("HEAD /h HTTP/1.1\r\nHost: h\r\n\r\nGET /h HTTP/1.1\r\nHost: h\r\n\r\n")
            let head = try #require(try client.readResponse(head: true))
            #expect(head.status == 200)
            #expect(head.header("Content-Length") == "8")  // "HEAD /h "
            #expect(head.body.isEmpty)
            // The next response starts right after the head: no body bytes were sent.
            let get = try #require(try client.readResponse())
            #expect(get.text == "GET /h ")
        }
    }

    @Test func chunkedRequestBody() async throws {
        try await withServer { port, _ in
            let client = try RawClient(port: port)
            try client.send("POST /c HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n")
            try client.send("4;ext=1\r\nabcd\r\n")
            try client.send("2\r\nef\r\n0\r\nTrailer: x\r\n\r\n")
            #expect(try client.readResponse()?.text == "POST /c abcdef")
        }
    }

    @Test func largeBodyInAndOut() async throws {
        let handler = ClosureHandler { request, responder in
            responder.respond(HTTPResponse(status: 200, body: request.body))
        }
        try await withServer(handler: handler) { port, _ in
            let client = try RawClient(port: port)
            let body = (0..<3_000_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
            try client.send(Array("PUT /big HTTP/1.1\r\nHost: h\r\nContent-Length: \(body.count)\r\n\r\n".utf8) + body)
            let response = try #require(try client.readResponse())
            #expect(response.body == body)
        }
    }

    @Test func http10ClosesUnlessKeepAlive() async throws {
        try await withServer { port, _ in
            let plain = try RawClient(port: port)
            try plain.send("GET /a HTTP/1.0\r\n\r\n")
            let response = try #require(try plain.readResponse())
            #expect(response.header("Connection") == "close")
            #expect(plain.isClosedByServer())

            let keepAlive = try RawClient(port: port)
            try keepAlive.send("GET /a HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
            #expect(try keepAlive.readResponse()?.header("Connection") == "keep-alive")
            try keepAlive.send("GET /b HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
            #expect(try keepAlive.readResponse()?.text == "GET /b ")
        }
    }

    @Test func requestsAfterHalfCloseAreStillAnswered() async throws {
        try await withServer { port, _ in
            let client = try RawClient(port: port)
            try client.send("GET /a HTTP/1.1\r\nHost: h\r\n\r\nGET /b HTTP/1.1\r\nHost: h\r\n\r\n")
            client.finishSending()
            #expect(try client.readResponse()?.text == "GET /a ")
            #expect(try client.readResponse()?.text == "GET /b ")
            #expect(client.isClosedByServer())
        }
    }

    @Test func remoteAddressIsSet() async throws {
        let handler = ClosureHandler { request, responder in responder.respond(.text(request.remoteAddress)) }
        try await withServer(handler: handler) { port, _ in
            let client = try RawClient(port: port)
            try client.send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
            #expect(try client.readResponse()?.text == "127.0.0.1")
        }
    }

    /// Responses and pushes leave when written (no Nagle wait for the ACK of the last
    /// segment): the server's end of an accepted connection has TCP_NODELAY. The server
    /// runs in this process, so its socket is found among ours by its two ports.
    @Test func acceptedConnectionsSendWithoutDelay() async throws {
        try await withServer { port, _ in
            let client = try RawClient(port: port)
            try client.send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
            #expect(try client.readResponse()?.status == 200)
            let clientPort = try #require(Self.ports(of: client.fd)?.local)
            let server = try #require((0..<Int32(65_536)).first { fd in
                guard let ports = Self.ports(of: fd) else { return false }
                return ports.local == port && ports.peer == clientPort
            }, "the server's end of the connection")
            var flag: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            #expect(getsockopt(server, Int32(IPPROTO_TCP), TCP_NODELAY, &flag, &length) == 0)
            #expect(flag != 0)
        }
    }

    /// The local and peer ports of an IPv4 socket; nil for anything else.
    static func ports(of fd: Int32) -> (local: Int, peer: Int)? {
        func port(_ call: (Int32, UnsafeMutablePointer<sockaddr>, UnsafeMutablePointer<socklen_t>) -> Int32) -> Int? {
            var address = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let result = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { call(fd, $0, &length) }
            }
            guard result == 0, address.sin_family == sa_family_t(AF_INET) else { return nil }
            return Int(UInt16(bigEndian: address.sin_port))
        }
        guard let local = port(getsockname), let peer = port(getpeername) else { return nil }
        return (local, peer)
    }

    @Test func invalidHostIsRefusedAtStart() {
        let server = HTTPServer(configuration: HTTPServerConfiguration(host: "localhost.invalid", port: 0), handler: echoHandler)
        #expect(throws: HTTPServerError.invalidHost("localhost.invalid")) { try server.start() }
    }

    @Test func ipv6LoopbackBinds() async throws {
        let server = HTTPServer(configuration: HTTPServerConfiguration(host: "[::1]", port: 0), handler: echoHandler)
        let port: Int
        do {
            port = try server.start()
        } catch let error as SystemError where error.errno == 99 /* EADDRNOTAVAIL: no IPv6 here */ {
            return
        }
        #expect(port > 0)
        await server.shutdown(gracePeriod: 0)
    }
}
