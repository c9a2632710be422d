import Dispatch
import Synchronization
import Testing
@testable import HearthHTTP

/// Stream output posted to a busy I/O loop waits in its mailbox (`IOLoop.post`) and leaves
/// in one send per connection when the loop gets to it: a backlog of pushes costs one
/// syscall, not one per push, so it drains instead of growing.
@Suite("HTTPServer: stream batches")
struct HTTPStreamBatchTests {
    static let events = 200

    static func event(_ i: Int) -> [UInt8] { Array("data: \(i)\n\n".utf8) }

    /// Opens a stream, then runs `body` with it while its loop is held busy by a block the
    /// caller releases through the gate it is given.
    static func withBusyStream(
        _ body: @escaping (HTTPEventStream, HTTPServer, RawClient, _ release: () -> Void) throws -> Void
    ) async throws {
        let opened = DispatchSemaphore(value: 0)
        let held = Mutex<HTTPEventStream?>(nil)
        let handler = ClosureHandler { _, responder in
            let head = HTTPResponse(status: 200, headers: HTTPHeaders([("Content-Type", "text/event-stream")]), body: [])
            responder.openStream(head, options: HTTPStreamOptions(maxBufferedBytes: 1 << 20, overflowBytes: [])) { stream in
                held.withLock { $0 = stream }
                opened.signal()
            }
        }
        try await withServer(handler: handler) { port, server in
            let client = try RawClient(port: port)
            try client.send("GET /s HTTP/1.1\r\nHost: h\r\n\r\n")
            opened.wait()
            let stream = try #require(held.withLock { $0 })
            #expect(try client.readResponse()?.status == 200)  // the head
            let gate = DispatchSemaphore(value: 0), busy = DispatchSemaphore(value: 0)
            stream.connection.loop.queue.async {
                busy.signal()
                gate.wait()
            }
            busy.wait()
            try body(stream, server, client) { gate.signal() }
        }
    }

    @Test func eventsPostedWhileTheLoopIsBusyLeaveInOneWrite() async throws {
        try await Self.withBusyStream { stream, server, client, release in
            // The head's write is counted before the busy block runs (same queue, earlier).
            let before = server.stats.streamWrites
            for i in 0..<Self.events { stream.send(Self.event(i)) }  // from this thread: posted
            release()
            let expected = (0..<Self.events).flatMap(Self.event)
            #expect(client.read(count: expected.count) == expected)
            stream.connection.loop.queue.sync {}  // the write's count is settled
            #expect(server.stats.streamWrites - before == 1)
        }
    }

    @Test func aCloseInTheSameBatchComesAfterTheEventsBeforeIt() async throws {
        try await Self.withBusyStream { stream, _, client, release in
            for i in 0..<Self.events { stream.send(Self.event(i)) }
            stream.close()
            stream.send(Self.event(Self.events))  // after the close: never written
            release()
            #expect(client.readUntilClose() == (0..<Self.events).flatMap(Self.event))
        }
    }

    @Test func anEventPostedFromTheLoopItselfIsWrittenAtOnce() async throws {
        try await Self.withBusyStream { stream, server, client, release in
            release()
            let before = server.stats.streamWrites
            stream.connection.loop.queue.sync { stream.send(Self.event(7)) }
            #expect(client.read(count: Self.event(7).count) == Self.event(7))
            #expect(server.stats.streamWrites - before == 1)
        }
    }

    @Test func anEventTheSocketTakesOnlyInPartIsFinishedFromTheQueue() async throws {
        try await Self.withBusyStream { stream, server, client, release in
            release()
            // Far more than a loopback socket takes at once from a reader that is not reading:
            // the direct send writes a part, the rest waits in the output for the write source.
            let big = (0..<(8 << 20)).map { UInt8(truncatingIfNeeded: $0 % 251) }
            let before = server.stats.streamWrites
            stream.connection.loop.queue.sync { stream.send(big) }
            #expect(client.read(count: big.count) == big)
            stream.connection.loop.queue.sync {}
            #expect(server.stats.streamWrites - before > 1)  // written in parts
        }
    }
}
