import Testing
@testable import HearthHTTP

@Suite("HTTPServer: resources")
struct HTTPServerResourceTests {
    @Test func closedConnectionsAreFreed() async throws {
        let server = HTTPServer(configuration: HTTPServerConfiguration(host: "127.0.0.1", port: 0), handler: echoHandler)
        let port = try server.start()
        for i in 0..<20 {
            let client = try RawClient(port: port)
            if i % 2 == 0 {
                try client.send("GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n")
                _ = client.readUntilClose()
            } else {
                try client.send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
                _ = try client.readResponse()
            }
        }
        await server.shutdown(gracePeriod: 1)
        #expect(server.stats.openConnections == 0)
        #expect(server.counters.liveConnectionObjects.load(ordering: .relaxed) == 0)
    }
}
