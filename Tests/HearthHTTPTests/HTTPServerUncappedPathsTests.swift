import Testing
@testable import HearthHTTP

/// Health checks are never refused by the per-address connection cap:
/// `HTTPServerConfiguration.uncappedPaths` and `HTTPLimits.uncappedConnectionsPerAddress`.
@Suite("HTTP server: health checks past the address cap")
struct HTTPServerUncappedPathsTests {
    static func get(_ client: RawClient, _ path: String, forwardedFor: String? = nil) throws -> RawResponse? {
        let forwarded = forwardedFor.map { "X-Forwarded-For: \($0)\r\n" } ?? ""
        try client.send("GET \(path) HTTP/1.1\r\nHost: h\r\n\(forwarded)\r\n")
        return try client.readResponse()
    }

    /// The safety net of `until`: a test fails after this long rather than hanging.
    static let eventTimeout: Duration = .seconds(60)

    /// Waits for a condition the server reaches on its own queues (noticing that clients
    /// closed), checking every millisecond. A count of yields was the bound before: on a
    /// loaded 2-core machine a million of them passed before the server's I/O queue ran
    /// (seen once in a full run), so the bound is time, as a safety net only.
    static func until(_ what: String, _ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + eventTimeout
        while !condition() {
            try #require(ContinuousClock.now < deadline, "the server never got there: \(what)")
            try await Task.sleep(for: .milliseconds(1))
        }
    }

    static func withServer(trustedProxies: Set<String> = [], _ body: (Int, HTTPServer) async throws -> Void) async throws {
        var limits = HTTPLimits()
        limits.maxConnectionsPerAddress = 2
        // The kept connections hold the address's cap for the whole test, and the idle ones
        // hold the reserve without sending anything: no timeout may close them, however
        // slowly a loaded machine runs the test (a full CI run took it past the 60 s idle
        // timeout, the kept ones closed, and the reserve never filled).
        limits.idleTimeout = 3_600
        limits.headerReadTimeout = 3_600
        var configuration = HTTPServerConfiguration(host: "127.0.0.1", port: 0, ioQueueCount: 2, limits: limits)
        configuration.uncappedPaths = ["/healthz"]
        configuration.trustedProxies = trustedProxies
        let server = HTTPServer(configuration: configuration, handler: echoHandler)
        let port = try server.start()
        try await body(port, server)
        await server.shutdown(gracePeriod: 1)
    }

    @Test func pastTheCapHealthChecksAreServedAndNothingElse() async throws {
        try await Self.withServer { port, server in
            let kept = try (0..<2).map { _ in try RawClient(port: port) }
            for client in kept { #expect(try Self.get(client, "/k")?.status == 200) }
            do {
                let health = try RawClient(port: port)
                let answer = try #require(try Self.get(health, "/healthz"))
                #expect(answer.status == 200 && answer.header("Connection") == "close")
                #expect(health.readUntilClose().isEmpty)  // one request, then closed
                let other = try RawClient(port: port)
                #expect(try Self.get(other, "/k")?.status == 429)
                #expect(server.stats.addressRefusals == 1)
            }
            // Both closed: their places in the reserve are free again.
            try await Self.until("reserve 0, is \(server.reserve.count("127.0.0.1")), addresses \(server.addresses.count("127.0.0.1"))") { server.reserve.count("127.0.0.1") == 0 }
            // The reserve is bounded: past `uncappedConnectionsPerAddress` open ones, 429 at accept.
            let idle = try (0..<HTTPLimits.uncappedConnectionsPerAddress).map { _ in try RawClient(port: port) }
            try await Self.until("reserve \(idle.count), is \(server.reserve.count("127.0.0.1")), addresses \(server.addresses.count("127.0.0.1"))") { server.reserve.count("127.0.0.1") == idle.count }
            let refused = try RawClient(port: port)
            #expect(try refused.readResponse()?.status == 429)
            #expect(server.addresses.count("127.0.0.1") == 2)
        }
    }

    @Test func behindATrustedProxyAForwardedClientAtItsCapGetsHealthChecks() async throws {
        try await Self.withServer(trustedProxies: ["127.0.0.1"]) { port, _ in
            let kept = try (0..<2).map { _ in try RawClient(port: port) }
            for client in kept { #expect(try Self.get(client, "/k", forwardedFor: "203.0.113.5")?.status == 200) }
            let third = try RawClient(port: port)
            #expect(try Self.get(third, "/readyz", forwardedFor: "203.0.113.5")?.status == 429)
            let health = try RawClient(port: port)
            #expect(try Self.get(health, "/healthz", forwardedFor: "203.0.113.5")?.status == 200)
        }
    }
}
