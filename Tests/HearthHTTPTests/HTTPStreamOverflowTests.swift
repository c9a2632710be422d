#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import HearthTesting
import Synchronization
import Testing
@testable import HearthHTTP

/// A stream whose reader falls more than `maxBufferedBytes` behind ends with the overflow
/// bytes (SSE: `cancel`) after whole events, then closes (docs/streams.md, "Slow readers").
@Suite("HTTPServer: stream overflow")
struct HTTPStreamOverflowTests {
    static let eventBytes = 256 * 1024
    static let events = 64  // 16 MiB: far more than the kernel buffers towards a reader that waits
    static let bound = 512 * 1024
    static let cancel = Array("event: cancel\ndata: null\n\n".utf8)

    static func event(_ i: Int) -> [UInt8] {
        Array("data: \(i):".utf8) + [UInt8](repeating: UInt8(ascii: "x"), count: eventBytes) + Array("\n\n".utf8)
    }

    @Test func aReaderThatFallsBehindGetsWholeEventsThenCancelThenTheEnd() async throws {
        let sent = DispatchSemaphore(value: 0)
        let handler = ClosureHandler { _, responder in
            let head = HTTPResponse(status: 200, headers: HTTPHeaders([("Content-Type", "text/event-stream")]), body: [])
            responder.openStream(head, options: HTTPStreamOptions(maxBufferedBytes: Self.bound, overflowBytes: Self.cancel)) { stream in
                guard let stream else { sent.signal(); return }
                // From another thread, as an application sends; the reader does not read
                // until every send was handled on the I/O queue (the signal is queued behind
                // them), so the overflow is certain.
                DispatchQueue.global().async {
                    for i in 0..<Self.events { stream.send(Self.event(i)) }
                    stream.connection.loop.queue.async { sent.signal() }
                }
            }
        }
        try await withServer(handler: handler) { port, server in
            let client = try RawClient(port: port)
            try client.send("GET /s HTTP/1.1\r\nHost: h\r\n\r\n")
            sent.wait()
            let received = client.readUntilClose()
            let crlf2 = Array("\r\n\r\n".utf8)
            guard let headEnd = (0...(received.count - 4)).first(where: { Array(received[$0..<$0 + 4]) == crlf2 }) else {
                Issue.record("no head")
                return
            }
            let body = String(decoding: received[(headEnd + 4)...], as: UTF8.self)
            var frames = body.split(separator: "\n\n", omittingEmptySubsequences: false).map(String.init)
            #expect(frames.last == "")  // the body ends with a frame's blank line
            frames.removeLast()
            let endsWithCancel = frames.last == "event: cancel\ndata: null"
            #expect(endsWithCancel, "last frame begins \(String((frames.last ?? "").prefix(40)))")
            let events = frames.dropLast()
            #expect(!events.isEmpty && events.count < Self.events)
            for (i, frame) in events.enumerated() {
                let whole = frame == "data: \(i):" + String(repeating: "x", count: Self.eventBytes)
                #expect(whole, "event \(i) is not whole: \(frame.utf8.count) bytes")
            }
            #expect(server.stats.streamOverflows == 1)
        }
    }

    /// A reader that reads, but never enough to let the output drain, is held to what it
    /// has not taken: the written head of the output is dropped as it goes
    /// (`HTTPConnection.dropWrittenOutput`). 16 MiB stay outstanding (more than the kernel
    /// buffers take with the client's receive buffer at 64 KiB), then 64 MiB pass through
    /// 64 KiB at a time. Kept until a drain, the output grew by every byte written: 80 MiB
    /// counted unsent against the server's bound, with 16 outstanding.
    @Test func aReaderThatNeverLetsTheOutputDrainHoldsOnlyWhatItHasNotTaken() async throws {
        let stream = Mutex<HTTPEventStream?>(nil)
        let bound = 32 << 20
        let handler = ClosureHandler { _, responder in
            let head = HTTPResponse(status: 200, headers: HTTPHeaders([("Content-Type", "text/event-stream")]), body: [])
            responder.openStream(head, options: HTTPStreamOptions(maxBufferedBytes: bound, overflowBytes: Self.cancel)) { opened in
                stream.withLock { $0 = opened }
            }
        }
        let eventBytes = 64 * 1024
        let event = Array("data: ".utf8) + [UInt8](repeating: UInt8(ascii: "z"), count: eventBytes - 8) + Array("\n\n".utf8)
        try await withServer(handler: handler) { port, server in
            let client = try RawClient(port: port)
            var small: Int32 = 64 * 1024
            setsockopt(client.fd, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size))
            try client.send("GET /s HTTP/1.1\r\nHost: h\r\n\r\n")
            try await waitUntil("the stream to open") { stream.withLock { $0 } != nil }
            let events = try #require(stream.withLock { $0 })
            for _ in 0..<256 { events.send(event) }  // 16 MiB outstanding
            #expect(try client.readResponse()?.status == 200)
            var largest = 0
            for _ in 0..<1024 {
                events.send(event)
                _ = try #require(client.read(count: eventBytes))
                largest = max(largest, server.stats.unsentBytes)
            }
            #expect(largest <= 2 * 256 * eventBytes + HTTPConnection.streamCompactionBytes + 2 * eventBytes,
                    "\(largest) bytes counted unsent with \(256 * eventBytes) outstanding")
            #expect(server.stats.streamOverflows == 0)
        }
    }

    /// The bound is on what waits behind the event going out: an event 16 times the bound
    /// (more than the kernel takes while the reader waits) goes out whole to a reader that
    /// reads, with the small events queued behind it while it waits. Before, any event
    /// queued while a larger-than-the-bound one was still going out ended the stream.
    @Test func anEventLargerThanTheBoundAndTheEventsBehindItReachAReaderThatReads() async throws {
        let sent = DispatchSemaphore(value: 0)
        let large = 16 * Self.bound
        let handler = ClosureHandler { _, responder in
            let head = HTTPResponse(status: 200, headers: HTTPHeaders([("Content-Type", "text/event-stream")]), body: [])
            responder.openStream(head, options: HTTPStreamOptions(maxBufferedBytes: Self.bound, overflowBytes: Self.cancel)) { stream in
                guard let stream else { sent.signal(); return }
                DispatchQueue.global().async {
                    stream.send(Array("data: large:".utf8) + [UInt8](repeating: UInt8(ascii: "y"), count: large) + Array("\n\n".utf8))
                    for i in 0..<3 { stream.send(Array("data: after \(i)\n\n".utf8)) }
                    stream.finish([])
                    stream.connection.loop.queue.async { sent.signal() }
                }
            }
        }
        try await withServer(handler: handler) { port, server in
            let client = try RawClient(port: port)
            try client.send("GET /s HTTP/1.1\r\nHost: h\r\n\r\n")
            sent.wait()  // every send handled before the reader reads a byte
            let body = String(decoding: client.readUntilClose(), as: UTF8.self)
            let frames = body.components(separatedBy: "\r\n\r\n").dropFirst().joined().split(separator: "\n\n").map(String.init)
            #expect(frames.count == 4, "\(frames.count) events; the last begins \(String((frames.last ?? "").prefix(40)))")
            #expect(frames.first == "data: large:" + String(repeating: "y", count: large))
            #expect(Array(frames.dropFirst()) == ["data: after 0", "data: after 1", "data: after 2"])
            #expect(server.stats.streamOverflows == 0)
        }
    }
}
