#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import HearthSystem
import Synchronization
import Testing
@testable import HearthHTTP

/// An I/O loop's readiness comes from its own epoll instance (`IOLoop.Poller`):
/// a descriptor is reported once and stays quiet until its connection arms it again, a
/// forgotten one is not reported at all, stopping ends the waiting thread, and a wait's
/// connections run on that thread.
@Suite("IOLoop: poller")
struct IOLoopPollerTests {
    /// What the poller delivered, in order, with a semaphore per delivery.
    final class Deliveries: Sendable {
        let batches = Mutex<[[UInt64]]>([])
        let arrived = DispatchSemaphore(value: 0)

        func record(_ ready: [(token: UInt64, events: UInt32)]) {
            batches.withLock { $0.append(ready.map(\.token)) }
            arrived.signal()
        }

        /// Waits until a delivery after the first `skipped` holds `token` (10 s at most);
        /// the batches from there up to it.
        func until(_ token: UInt64, after skipped: Int = 0) -> [[UInt64]]? {
            while true {
                let seen = batches.withLock { $0 }
                if let index = seen.indices.first(where: { $0 >= skipped && seen[$0].contains(token) }) {
                    return Array(seen[skipped...index])
                }
                if arrived.wait(timeout: .now() + 10) == .timedOut { return nil }
            }
        }
    }

    /// A connected pair of stream sockets: (the end watched, the end written to).
    final class Pair {
        let watched: Int32
        let peer: Int32
        init() throws {
            var fds: [Int32] = [0, 0]
            try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0)
            (watched, peer) = (fds[0], fds[1])
        }
        deinit {
            Glibc.close(watched)
            Glibc.close(peer)
        }
        func send(_ text: String) { _ = text.withCString { Glibc.write(peer, $0, strlen($0)) } }
    }

    /// A started poller watching two socket pairs' ends for input, as tokens 1 and 2.
    static func twoWatchedPairs() throws -> (IOLoop.Poller, Deliveries, Pair, Pair) {
        let poller = IOLoop.Poller()
        let deliveries = Deliveries()
        try poller.start { deliveries.record($0) }
        let (a, b) = (try Pair(), try Pair())
        try poller.watch(a.watched, events: EventPoll.readable, token: 1)
        try poller.watch(b.watched, events: EventPoll.readable, token: 2)
        return (poller, deliveries, a, b)
    }

    @Test func aDescriptorIsReportedOnceUntilArmedAgain() throws {
        let (poller, deliveries, a, b) = try Self.twoWatchedPairs()
        defer { poller.stop() }
        a.send("first")
        _ = try #require(deliveries.until(1))
        // Still unread, and more arrives: a level-triggered watch would report it at
        // every wait; one-shot, it is not reported again before b's event.
        a.send("second")
        b.send("b")
        let upToB = try #require(deliveries.until(2))
        #expect(upToB.joined().filter { $0 == 1 }.count == 1, "batches: \(upToB)")
        // Armed again, the unread input is reported again.
        try poller.arm(a.watched, events: EventPoll.readable, token: 1)
        let again = deliveries.until(1, after: upToB.count)
        #expect(again != nil)
    }

    @Test func aForgottenDescriptorIsNotReported() throws {
        let (poller, deliveries, a, b) = try Self.twoWatchedPairs()
        defer { poller.stop() }
        poller.forget(a.watched)
        // a's input arrives first: were it still watched, it would be reported no later
        // than b's, which comes after it.
        a.send("to no one")
        b.send("b")
        let upToB = try #require(deliveries.until(2))
        #expect(!upToB.joined().contains(1), "batches: \(upToB)")
    }

    @Test func moreReadyDescriptorsThanOneWaitTakesAreAllReported() throws {
        let poller = IOLoop.Poller()
        defer { poller.stop() }
        let deliveries = Deliveries()
        let count = IOLoop.Poller.eventsPerWait + 44
        let pairs = try (0..<count).map { _ in try Pair() }
        // All ready and watched before the thread starts: its first wait takes only
        // `eventsPerWait` of them, the next one the rest.
        for (index, pair) in pairs.enumerated() {
            pair.send("x")
            try poller.watch(pair.watched, events: EventPoll.readable, token: UInt64(index + 1))
        }
        try poller.start { deliveries.record($0) }
        for token in 1...UInt64(count) {
            _ = try #require(deliveries.until(token), "token \(token) never reported")
        }
        let batches = deliveries.batches.withLock { $0 }
        #expect(batches.first?.count == IOLoop.Poller.eventsPerWait)
        #expect(batches.allSatisfy { $0.count <= IOLoop.Poller.eventsPerWait })
        #expect(batches.joined().count == count)  // one-shot: each once
    }

    @Test func stoppingEndsTheWaitingThread() throws {
        /// Signals when the thread lets go of what it was given.
        final class Sentinel: Sendable {
            let released: DispatchSemaphore
            init(_ released: DispatchSemaphore) { self.released = released }
            deinit { released.signal() }
        }
        let released = DispatchSemaphore(value: 0)
        let poller = IOLoop.Poller()
        let deliveries = Deliveries()
        do {
            let sentinel = Sentinel(released)
            try poller.start { ready in
                withExtendedLifetime(sentinel) { deliveries.record(ready) }
            }
        }
        // One delivery first, so the thread is known to be in its loop (and then back in
        // its wait, which only the waker ends).
        let pair = try Pair()
        try poller.watch(pair.watched, events: EventPoll.readable, token: 1)
        pair.send("x")
        _ = try #require(deliveries.until(1))
        poller.stop()
        #expect(released.wait(timeout: .now() + 10) == .success)
    }

    /// A wait's ready connections run on the poller's own thread (`queue.sync` in
    /// `IOLoop.startPolling`), not on a Dispatch worker woken for them: requests that
    /// arrive on an open connection are handled on one of the loops' waiting threads.
    @Test func aWaitsConnectionsRunOnThePollersOwnThread() async throws {
        final class Seen: Sendable {
            let threads = Mutex<[String: UInt]>([:])
        }
        let seen = Seen()
        let handler = ClosureHandler { request, responder in
            seen.threads.withLock { $0[request.path] = UInt(pthread_self()) }
            responder.respond(.text(request.path))
        }
        try await withServer(handler: handler) { port, server in
            let client = try RawClient(port: port)
            for path in ["/first", "/second", "/third"] {
                try client.send("GET \(path) HTTP/1.1\r\nHost: h\r\n\r\n")
                #expect(try client.readResponse()?.text == path)
            }
            // The waiting threads known so far (0: a loop with no connection whose thread
            // has not run yet on a busy machine; no handler runs on a thread with id 0).
            let pollers = Set(server.loops.map { $0.poller.threadID.load(ordering: .acquiring) })
            let threads = seen.threads.withLock { $0 }
            // The first request may have been read when the connection joined its loop;
            // the later ones arrived on a watched socket.
            for path in ["/second", "/third"] {
                let thread = try #require(threads[path])
                #expect(pollers.contains(thread))
            }
        }
    }
}
