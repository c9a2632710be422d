import Testing
@testable import HearthHTTP

/// Live tests for every limit and for malformed input: a typed status, a generic JSON
/// body, then the server closes.
@Suite("HTTPServer: limits and malformed input")
struct HTTPServerLimitTests {
    /// Reads one response and checks that it is a closing error with a generic JSON body.
    func expectClosingError(_ client: RawClient, status: Int, text: String) throws {
        let response = try #require(try client.readResponse())
        #expect(response.status == status)
        #expect(response.header("Connection") == "close")
        #expect(response.header("Content-Type") == "application/json")
        #expect(response.text == "{\"error\":\"\(text)\"}")
        #expect(client.isClosedByServer())
    }

    @Test func hugeContentLengthIs413() async throws {
        try await withServer { port, _ in
            let client = try RawClient(port: port)
            try client.send("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1000000000\r\n\r\n")
            try expectClosingError(client, status: 413, text: "Payload too large")
        }
    }

    @Test func tooLargeHeaderSectionIs431() async throws {
        var limits = HTTPLimits()
        limits.maxHeaderBytes = 1024
        try await withServer(limits: limits) { port, _ in
            let client = try RawClient(port: port)
            try client.send("GET / HTTP/1.1\r\nHost: h\r\nX-Big: " + String(repeating: "b", count: 4000) + "\r\n\r\n")
            try expectClosingError(client, status: 431, text: "Request header fields too large")
        }
    }

    @Test func tooManyHeadersIs431() async throws {
        var limits = HTTPLimits()
        limits.maxHeaderCount = 3
        try await withServer(limits: limits) { port, _ in
            let client = try RawClient(port: port)
            try client.send("GET / HTTP/1.1\r\nHost: h\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n")
            try expectClosingError(client, status: 431, text: "Request header fields too large")
        }
    }

    @Test func tooLongRequestLineIs414() async throws {
        var limits = HTTPLimits()
        limits.maxRequestLineBytes = 100
        try await withServer(limits: limits) { port, _ in
            let client = try RawClient(port: port)
            try client.send("GET /" + String(repeating: "a", count: 200) + " HTTP/1.1\r\nHost: h\r\n\r\n")
            try expectClosingError(client, status: 414, text: "Request target too long")
        }
    }

    @Test func slowHeaderGets408() async throws {
        var limits = HTTPLimits()
        limits.headerReadTimeout = 0.2
        try await withServer(limits: limits) { port, _ in
            let client = try RawClient(port: port)
            try client.send("GET / HTTP/1.1\r\nHost: h\r\n")  // the head never ends
            try expectClosingError(client, status: 408, text: "Request timeout")
        }
    }

    @Test func idleKeepAliveConnectionIsClosedSilently() async throws {
        var limits = HTTPLimits()
        limits.idleTimeout = 0.2
        try await withServer(limits: limits) { port, _ in
            let client = try RawClient(port: port)
            try client.send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
            #expect(try client.readResponse()?.status == 200)
            #expect(client.isClosedByServer())  // waits for the close: no bytes, no 408
        }
    }

    @Test func connectionsOverTheCapGet503() async throws {
        var limits = HTTPLimits()
        limits.maxConnections = 2
        try await withServer(limits: limits) { port, server in
            let first = try RawClient(port: port)
            let second = try RawClient(port: port)
            for client in [first, second] {  // both are now accepted and counted
                try client.send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
                #expect(try client.readResponse()?.status == 200)
            }
            let third = try RawClient(port: port)
            try expectClosingError(third, status: 503, text: "Service unavailable")
            #expect(server.stats.rejectedConnections == 1)
            // The first two still work.
            try first.send("GET /again HTTP/1.1\r\nHost: h\r\n\r\n")
            #expect(try first.readResponse()?.text == "GET /again ")
        }
    }

    @Test(arguments: [
        "GET / HTTP/1.1\r\nHost: h\r\nBroken\r\n\r\n",
        "GET / HTTP/1.1\r\n\r\n",
        "G(T / HTTP/1.1\r\nHost: h\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: h\r\nX: a\r\n folded\r\n\r\n",
        "GET / HTTP/1.1\nHost: h\n\n",
        "\u{0}\u{1}\u{2}garbage\r\n\r\n",
    ])
    func malformedRequestGets400AndClose(request: String) async throws {
        try await withServer { port, server in
            let client = try RawClient(port: port)
            try client.send(request)
            try expectClosingError(client, status: 400, text: "Bad request")
            #expect(server.stats.malformedRequests == 1)
            #expect(server.stats.totalRequests == 0)
        }
    }

    @Test func unsupportedVersionIs505() async throws {
        try await withServer { port, _ in
            let client = try RawClient(port: port)
            try client.send("GET / HTTP/2.0\r\nHost: h\r\n\r\n")
            try expectClosingError(client, status: 505, text: "HTTP version not supported")
        }
    }

    @Test func malformedRequestAfterAGoodOneStillGetsTheGoodAnswerFirst() async throws {
        try await withServer { port, _ in
            let client = try RawClient(port: port)
            try client.send("GET /ok HTTP/1.1\r\nHost: h\r\n\r\nBAD REQUEST\r\n\r\n")
            #expect(try client.readResponse()?.text == "GET /ok ")
            try expectClosingError(client, status: 400, text: "Bad request")
        }
    }
}
