import Dispatch
import HearthTesting
import Synchronization
import Testing
@testable import HearthHTTP

/// `HTTPServerConfiguration.largeStreamUnit` hears of each unit of at least
/// `largeStreamUnitBytes` queued on an open stream, as it is queued, and of no smaller one.
@Suite("HTTPServer: large stream units")
struct HTTPLargeStreamUnitTests {
    @Test func unitsFromTheThresholdUpAreReportedAsTheyAreQueued() async throws {
        let large = HTTPServerConfiguration.largeStreamUnitBytes
        let sizes = [large - 1, 10, large, 3 * large]
        let reported = Mutex<[Int]>([])
        let handler = ClosureHandler { _, responder in
            let head = HTTPResponse(status: 200, headers: HTTPHeaders([("Content-Type", "text/event-stream")]), body: [])
            responder.openStream(head, options: HTTPStreamOptions(maxBufferedBytes: 64 << 20, overflowBytes: [])) { stream in
                for size in sizes { stream?.send([UInt8](repeating: UInt8(ascii: "x"), count: size)) }
            }
        }
        var configuration = HTTPServerConfiguration(host: "127.0.0.1", port: 0, ioQueueCount: 2)
        configuration.largeStreamUnit = { size in reported.withLock { $0.append(size) } }
        let server = HTTPServer(configuration: configuration, handler: handler)
        let port = try server.start()
        let client = try RawClient(port: port)
        try client.send("GET /s HTTP/1.1\r\nHost: h\r\n\r\n")
        let head = try #require(try client.readResponse(head: true))
        #expect(head.status == 200)
        // Every byte arrives, and the stream stays open.
        #expect(client.read(count: sizes.reduce(0, +))?.allSatisfy { $0 == UInt8(ascii: "x") } == true)
        #expect(reported.withLock { $0 } == [large, 3 * large])
        await server.shutdown(gracePeriod: 1)
    }
}
