#if canImport(Glibc)
import Glibc
#endif
import HearthSystem
import HearthTesting
import Synchronization
import Testing
@testable import HearthHTTP

/// The kernel failing a flush's `io_uring_enter` (a stand-in `SendRing.Enter`: no healthy
/// ring fails on demand): what reached the connections whose sends had no result is
/// unknown, so they are closed without another byte, the log says so, the loop sends
/// with `send()` from then on, and every other stream gets every push in order.
@Suite("HTTPServer: a send ring the kernel fails")
struct HTTPSendRingFailureTests {
    typealias Streams = HTTPBroadcastRingTests

    /// Makes the kernel's call for the first `passing` flushes' `io_uring_enter`s, then
    /// fails the next with `ENXIO`: after making the call when `afterCall` (the sends went
    /// out, and the call still reports a failure), or without making it (nothing was
    /// submitted). A ring that failed is never flushed again.
    final class FailingEnter: Sendable {
        let passing: Int
        let afterCall: Bool
        let calls = Mutex(0)

        init(passing: Int, afterCall: Bool) {
            self.passing = passing
            self.afterCall = afterCall
        }

        var enter: SendRing.Enter {
            { kernel in
                let call = self.calls.withLock { calls in
                    calls += 1
                    return calls
                }
                guard call == self.passing + 1 else { return kernel() }
                if self.afterCall { _ = kernel() }
                errno = ENXIO
                return -1
            }
        }
    }

    /// Reads `expected` from each client that the server kept, and what each closed one
    /// got before its end; returns how many were closed.
    static func readEach(_ clients: [RawClient], expecting expected: [UInt8], closedGot: [UInt8]) -> Int {
        var closed = 0
        for (index, client) in clients.enumerated() {
            if let got = client.read(count: expected.count) {
                let same = got == expected
                #expect(same, "stream \(index)")
            } else {
                closed += 1
                let got = client.readUntilClose()
                #expect(got == closedGot, "closed stream \(index): \(got.count) bytes")
            }
        }
        return closed
    }

    /// `count` streams on one loop whose ring of `capacity` fails its second flush; `body`
    /// gets them, their clients, the server and the failure lines the server logged so far.
    static func withFailingRing(
        _ count: Int, capacity: UInt32, afterCall: Bool,
        _ body: ([HTTPEventStream], [RawClient], HTTPServer, () -> [String]) throws -> Void
    ) async throws {
        let failing = FailingEnter(passing: 1, afterCall: afterCall)
        let logs = Mutex<[String]>([])
        let ring = { () throws(SystemError) -> SendRing in try SendRing(capacity: capacity, enter: failing.enter) }
        try await Streams.withStreams(count, batchedSends: true, loops: 1, log: { line in logs.withLock { $0.append(line) } },
                                      makeRing: ring) { streams, clients, server in
            try body(streams, clients, server) { logs.withLock { $0 }.filter { $0.contains("io_uring_enter failed") } }
            #expect(failing.calls.withLock { $0 } == 2)  // none after the failure
        }
    }

    /// The server logged one failure, saying `what` and that the loop goes on without a ring.
    static func expectOne(_ failures: [String], saying what: String) {
        #expect(failures.count == 1)
        #expect(failures.first?.contains(what + "; sending with send() from now on") == true, "\(failures)")
    }

    /// 40 streams on one loop, a ring of 16: a push's walk flushes the first 16 sends, and
    /// the kernel fails the flush of the next 16. Those 16 connections are closed; the
    /// walk sends to the last 8 with `send()`, and so does every later push.
    @Test(.enabled(if: ioUringAllowed()), arguments: [false, true])
    func aWalksFailedFlushClosesItsConnections(afterCall: Bool) async throws {
        try await Self.withFailingRing(40, capacity: 16, afterCall: afterCall) { streams, clients, server, failures in
            let group = HTTPBroadcastGroup.streams(streams)
            let first = Streams.event(0), later = (1..<4).map { Streams.event($0) }
            Streams.push([first], to: group, on: server)
            Streams.settle(server)  // a close finishes in a block of its own, after the push's
            #expect(server.stats.ringSends == 16)
            #expect(server.stats.openStreams == 24)
            Self.expectOne(failures(), saying: "closing 16 connections whose push may be lost")
            Streams.push(later, to: group, on: server)
            #expect(server.stats.ringSends == 16)
            let closed = Self.readEach(clients, expecting: ([first] + later).flatMap { $0 }, closedGot: afterCall ? first : [])
            #expect(closed == 16)
        }
    }

    /// Pushes gathered while the loop was busy, for 3 streams, through a ring of 2: the
    /// first flush goes through, the kernel fails the second. Its one connection is
    /// closed; the other two keep what the ring sent them and get later pushes by `send()`.
    @Test(.enabled(if: ioUringAllowed()), arguments: [false, true])
    func aBatchsFailedFlushClosesItsConnections(afterCall: Bool) async throws {
        try await Self.withFailingRing(3, capacity: 2, afterCall: afterCall) { streams, clients, server, failures in
            let group = HTTPBroadcastGroup.streams(streams)
            let gathered = (0..<5).map { Streams.event($0) }
            Streams.whileLoopsAreBusy(server) { for event in gathered { group.send([event]) } }
            Streams.settle(server)  // a close finishes in a block of its own, after the batch's
            #expect(server.stats.ringSends == 2)
            #expect(server.stats.openStreams == 2)
            Self.expectOne(failures(), saying: "closing 1 connection whose pushes may be lost")
            let last = Streams.event(99)
            Streams.push([last], to: group, on: server)
            #expect(server.stats.ringSends == 2)
            let closed = Self.readEach(clients, expecting: (gathered + [last]).flatMap { $0 },
                                       closedGot: afterCall ? gathered.flatMap { $0 } : [])
            #expect(closed == 1)
        }
    }
}
