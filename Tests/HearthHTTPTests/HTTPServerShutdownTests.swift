#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Synchronization
import Testing
@testable import HearthHTTP

/// Holds the responder of a request the test answers itself.
final class ParkedResponder: Sendable {
    private let responder = Mutex<HTTPResponder?>(nil)
    let arrived = DispatchSemaphore(value: 0)

    func park(_ responder: HTTPResponder) {
        self.responder.withLock { $0 = responder }
        arrived.signal()
    }

    func respond(_ response: HTTPResponse) {
        responder.withLock { $0 }?.respond(response)
    }
}

@Suite("HTTPServer: graceful shutdown")
struct HTTPServerShutdownTests {
    @Test func inFlightRequestIsAnsweredAndNewConnectionsAreRefused() async throws {
        let parked = ParkedResponder()
        let handler = ClosureHandler { request, responder in
            if request.path == "/slow" { parked.park(responder) } else { responder.respond(.text("fast")) }
        }
        let server = HTTPServer(
            configuration: HTTPServerConfiguration(host: "127.0.0.1", port: 0, ioQueueCount: 2), handler: handler)
        let port = try server.start()

        let idle = try RawClient(port: port)
        try idle.send("GET /fast HTTP/1.1\r\nHost: h\r\n\r\n")
        #expect(try idle.readResponse()?.text == "fast")

        let busy = try RawClient(port: port)
        try busy.send("GET /slow HTTP/1.1\r\nHost: h\r\n\r\n")
        #expect(parked.arrived.wait(timeout: .now() + 10) == .success)

        let completed = DispatchSemaphore(value: 0)
        let completions = Atomic<Int>(0)
        server.shutdown(gracePeriod: 10) {
            completions.wrappingAdd(1, ordering: .relaxed)
            completed.signal()
        }

        #expect(RawClient.connectError(port: port) == ECONNREFUSED)
        #expect(idle.isClosedByServer())
        #expect(completed.wait(timeout: .now()) == .timedOut)

        parked.respond(.text("late"))
        let response = try #require(try busy.readResponse())
        #expect(response.text == "late")
        #expect(response.header("Connection") == "close")
        #expect(busy.isClosedByServer())
        #expect(completed.wait(timeout: .now() + 10) == .success)
        #expect(completions.load(ordering: .relaxed) == 1)
        #expect(server.stats.openConnections == 0)

        // A second shutdown completes at once.
        await server.shutdown(gracePeriod: 0)
    }

    @Test func gracePeriodEndForcesTheCloseOfUnansweredRequests() async throws {
        let parked = ParkedResponder()
        let handler = ClosureHandler { _, responder in parked.park(responder) }
        let server = HTTPServer(configuration: HTTPServerConfiguration(host: "127.0.0.1", port: 0), handler: handler)
        let port = try server.start()
        let client = try RawClient(port: port)
        try client.send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
        #expect(parked.arrived.wait(timeout: .now() + 10) == .success)
        await server.shutdown(gracePeriod: 0.1)
        #expect(client.isClosedByServer())
        #expect(server.stats.openConnections == 0)
        parked.respond(.text("too late"))  // dropped, no crash
    }

    @Test func shutdownOfAnUnstartedServerCompletes() async {
        let server = HTTPServer(configuration: HTTPServerConfiguration(port: 0), handler: echoHandler)
        await server.shutdown(gracePeriod: 1)
        #expect(throws: HTTPServerError.alreadyStarted) { try server.start() }
    }
}
