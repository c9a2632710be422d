#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import HearthSystem
import HearthTesting
import Synchronization
import Testing
@testable import HearthHTTP

/// A push to many streams (`HTTPBroadcastGroup`) through the loops' send rings (io_uring)
/// and without them: the same bytes, in the same order, on every connection; what a full
/// socket did not take is queued and follows; a peer that went away is closed; a kernel
/// that refuses io_uring leaves the server sending one `send()` at a time.
@Suite("HTTPServer: a push through the send ring")
struct HTTPBroadcastRingTests {
    /// Opens `count` event streams on a server and runs `body` with them, their clients
    /// (each past its head) and the server.
    static func withStreams(
        _ count: Int, batchedSends: Bool, maxBufferedBytes: Int = 1 << 20, loops: Int = 2,
        log: @escaping @Sendable (String) -> Void = { _ in },
        makeRing: () throws(SystemError) -> SendRing = { () throws(SystemError) in try SendRing() },
        _ body: ([HTTPEventStream], [RawClient], HTTPServer) throws -> Void
    ) async throws {
        let opened = DispatchSemaphore(value: 0)
        let streams = Mutex<[HTTPEventStream]>([])
        let handler = ClosureHandler { _, responder in
            let head = HTTPResponse(status: 200, headers: HTTPHeaders([("Content-Type", "text/event-stream")]), body: [])
            responder.openStream(head, options: HTTPStreamOptions(maxBufferedBytes: maxBufferedBytes, overflowBytes: [])) { stream in
                if let stream { streams.withLock { $0.append(stream) } }
                opened.signal()
            }
        }
        var configuration = HTTPServerConfiguration(host: "127.0.0.1", port: 0, ioQueueCount: loops)
        configuration.batchedSends = batchedSends
        let server = HTTPServer(configuration: configuration, handler: handler, log: log,
                                clock: { DispatchTime.now().uptimeNanoseconds }, makeRing: makeRing)
        let port = try server.start()
        do {
            var clients: [RawClient] = []
            for _ in 0..<count {
                let client = try RawClient(port: port)
                try client.send("GET /s HTTP/1.1\r\nHost: h\r\n\r\n")
                clients.append(client)
            }
            for _ in 0..<count { opened.wait() }
            for client in clients { #expect(try client.readResponse()?.status == 200) }
            let opened = streams.withLock { $0 }
            try #require(opened.count == count)
            // The group is in the streams' order; the clients in theirs: match them by the
            // server's view of each connection's peer port.
            try body(opened, try Self.order(clients, like: opened), server)
        } catch {
            await server.shutdown(gracePeriod: 0)
            throw error
        }
        await server.shutdown(gracePeriod: 0)
    }

    /// `clients` sorted as `streams` are (each stream's connection's peer is one client),
    /// matched by port: the client's own against the server side's peer.
    static func order(_ clients: [RawClient], like streams: [HTTPEventStream]) throws -> [RawClient] {
        var byPort: [UInt16: RawClient] = [:]
        for client in clients { byPort[Self.port(client.fd, peer: false)] = client }
        return try streams.map { stream in try #require(byPort[Self.port(stream.connection.fd, peer: true)]) }
    }

    /// The IPv4 port of `fd`'s own address, or of its peer's.
    static func port(_ fd: Int32, peer: Bool) -> UInt16 {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                peer ? getpeername(fd, $0, &length) : getsockname(fd, $0, &length)
            }
        }
        return UInt16(bigEndian: address.sin_port)
    }

    /// Waits until every loop of `server` has run what was posted to it before now.
    static func settle(_ server: HTTPServer) {
        for loop in server.loops { loop.queue.sync {} }
    }

    /// Sends each event to the group alone: each loop runs it as a block of its own, which
    /// writes as it goes (several posted at once would be gathered into one write per
    /// connection at the batch's end, not sent through the ring).
    static func push(_ events: [[UInt8]], to group: HTTPBroadcastGroup, on server: HTTPServer) {
        for event in events {
            group.send([event])
            settle(server)
        }
    }

    /// Every client reads all of `events`, in order, and nothing else before them.
    static func expectEachReads(_ events: [[UInt8]], _ clients: [RawClient]) {
        let expected = events.flatMap { $0 }
        for (index, client) in clients.enumerated() {
            let got = client.read(count: expected.count)
            let same = got == expected  // compared apart: a failure prints no megabytes
            #expect(same, "stream \(index): \(got?.count ?? -1) of \(expected.count) bytes")
        }
    }

    /// The ring carried the pushes exactly when it was asked for and the kernel allows it.
    static func expectRingUse(_ server: HTTPServer, batchedSends: Bool) {
        if batchedSends && ioUringAllowed() {
            #expect(server.stats.ringSends > 0)
        } else {
            #expect(server.stats.ringSends == 0)
        }
    }

    static func event(_ index: Int, size: Int = 0) -> [UInt8] {
        Array("data: \(index):".utf8) + [UInt8](repeating: UInt8(ascii: "x"), count: size) + Array("\n\n".utf8)
    }

    /// 300 streams on one loop, with a ring of 16: a walk flushes the ring each time it is
    /// full, and past `IOLoop.answerCheckInterval` (256), before answers run. (With the
    /// default ring of 256 the answers look comes first.) A walk that did not flush a full
    /// ring would send the rest with `send()`, and `ringSends` would fall short.
    @Test(arguments: [true, false])
    func everyStreamGetsEveryPushInOrder(batchedSends: Bool) async throws {
        #expect(300 > IOLoop.answerCheckInterval)
        let small = { () throws(SystemError) -> SendRing in try SendRing(capacity: 16) }
        try await Self.withStreams(300, batchedSends: batchedSends, loops: 1, makeRing: small) { streams, clients, server in
            #expect(server.sendsThroughRings == (batchedSends && ioUringAllowed()))
            #expect(server.sendRingError == nil || !ioUringAllowed())
            let group = HTTPBroadcastGroup.streams(streams)
            let events = (0..<20).map { Self.event($0) }
            Self.push(events, to: group, on: server)
            Self.expectRingUse(server, batchedSends: batchedSends)
            if server.sendsThroughRings { #expect(server.stats.ringSends == 300 * events.count) }
            Self.expectEachReads(events, clients)
        }
    }

    /// Readers that do not read while 4 MiB of pushes go out: each socket takes what it
    /// buffers, the rest waits in the connection's output (counted as unsent) and follows
    /// in order once the reader reads.
    @Test(arguments: [true, false])
    func whatAFullSocketDidNotTakeFollowsInOrder(batchedSends: Bool) async throws {
        try await Self.withStreams(3, batchedSends: batchedSends, maxBufferedBytes: 16 << 20) { streams, clients, server in
            let group = HTTPBroadcastGroup.streams(streams)
            let events = (0..<64).map { Self.event($0, size: 64 * 1024) }
            Self.push(events, to: group, on: server)
            Self.expectRingUse(server, batchedSends: batchedSends)
            #expect(server.stats.unsentBytes > 0)
            Self.expectEachReads(events, clients)
        }
    }

    /// A client that went away: its connection is closed (by the push that finds it reset,
    /// or by the read that sees it first), and the others keep getting every push.
    @Test(arguments: [true, false])
    func aStreamWhosePeerIsGoneIsClosedAndTheOthersGoOn(batchedSends: Bool) async throws {
        try await Self.withStreams(4, batchedSends: batchedSends) { streams, clients, server in
            let group = HTTPBroadcastGroup.streams(streams)
            var sent = [Self.event(0)]
            Self.push(sent, to: group, on: server)
            Self.expectRingUse(server, batchedSends: batchedSends)
            Glibc.shutdown(clients[1].fd, Int32(SHUT_RDWR))
            // Bounded: a server that never noticed fails the expectation below.
            for index in 1..<50 where server.stats.openStreams == 4 {
                let event = Self.event(index)
                Self.push([event], to: group, on: server)
                sent.append(event)
            }
            #expect(server.stats.openStreams == 3)
            let expected = sent.flatMap { $0 }
            for index in [0, 2, 3] {
                #expect(clients[index].read(count: expected.count) == expected, "stream \(index)")
            }
        }
    }

    /// A kernel that refuses io_uring (here: a ring maker that fails as a seccomp filter
    /// makes `io_uring_setup` fail): the server says why and sends one `send()` at a time.
    @Test func aRefusedRingLeavesOneSendPerConnection() async throws {
        let refuse = { () throws(SystemError) -> SendRing in throw SystemError(errno: EPERM, call: "io_uring_setup") }
        try await Self.withStreams(3, batchedSends: true, makeRing: refuse) { streams, clients, server in
            #expect(!server.sendsThroughRings)
            #expect(server.sendRingError?.errno == EPERM)
            #expect(server.loopsWithRings == 0)
            let group = HTTPBroadcastGroup.streams(streams)
            let events = (0..<5).map { Self.event($0) }
            Self.push(events, to: group, on: server)
            #expect(server.stats.ringSends == 0)
            let expected = events.flatMap { $0 }
            for client in clients { #expect(client.read(count: expected.count) == expected) }
        }
    }

    /// One loop's ring refused (as `ENOMEM` under a small `RLIMIT_MEMLOCK` on kernels
    /// before 5.12), the other's made: the server says so, and the streams on both loops get
    /// every push, through the ring on one and one `send()` each on the other.
    @Test(.enabled(if: ioUringAllowed()))
    func aLoopWithoutARingBesideOneWithARing() async throws {
        let made = Mutex(0)
        let second = { () throws(SystemError) -> SendRing in
            let count = made.withLock { count in
                count += 1
                return count
            }
            if count == 2 { throw SystemError(errno: ENOMEM, call: "io_uring_setup") }
            return try SendRing()
        }
        try await Self.withStreams(6, batchedSends: true, makeRing: second) { streams, clients, server in
            #expect(server.loopsWithRings == 1 && server.loopCount == 2)
            #expect(server.sendRingError?.errno == ENOMEM && !server.sendsThroughRings)
            let group = HTTPBroadcastGroup.streams(streams)
            let events = (0..<5).map { Self.event($0) }
            Self.push(events, to: group, on: server)
            let onRings = streams.filter { $0.connection.loop.ringSetupError == nil }.count
            #expect(onRings > 0 && onRings < 6)  // connections go to the loops in turn
            #expect(server.stats.ringSends == onRings * events.count)
            Self.expectEachReads(events, clients)
        }
    }

    /// Runs `body` while every loop of `server` is held busy, then lets them go: what
    /// `body` posts meanwhile runs as one batch per loop, whose stream output is gathered
    /// and written at the batch's end (`IOLoop.runPosted`).
    static func whileLoopsAreBusy(_ server: HTTPServer, _ body: () -> Void) {
        let gate = DispatchSemaphore(value: 0), busy = DispatchSemaphore(value: 0)
        for loop in server.loops {
            loop.queue.async {
                busy.signal()
                gate.wait()
            }
        }
        for _ in server.loops { busy.wait() }
        body()
        for _ in server.loops { gate.signal() }
        settle(server)
    }

    /// Pushes that waited while the loops were busy: each loop writes what its batch
    /// gathered through the ring, one send per connection (a copy of its waiting output),
    /// and every stream gets every push in order. Rings of 2 for 3 connections a loop: the
    /// ring fills, is flushed, and takes the third.
    @Test(arguments: [true, false])
    func aBatchsGatheredOutputGoesThroughTheRing(batchedSends: Bool) async throws {
        let small = { () throws(SystemError) -> SendRing in try SendRing(capacity: 2) }
        try await Self.withStreams(6, batchedSends: batchedSends, makeRing: small) { streams, clients, server in
            let group = HTTPBroadcastGroup.streams(streams)
            let events = (0..<30).map { Self.event($0) }
            Self.whileLoopsAreBusy(server) { for event in events { group.send([event]) } }
            Self.expectRingUse(server, batchedSends: batchedSends)
            if server.sendsThroughRings { #expect(server.stats.ringSends == 6) }  // one per connection
            // A last push after the batch: any byte sent twice or left out shows before it.
            let last = Self.event(99)
            Self.push([last], to: group, on: server)
            Self.expectEachReads(events + [last], clients)
        }
    }

    /// More gathered output than the loop's arena holds (`IOLoop.ringArenaBytes`): the ring
    /// sends the start of it, and the connections write the rest themselves, in order.
    @Test(arguments: [true, false])
    func gatheredOutputLargerThanTheArenaFollowsInOrder(batchedSends: Bool) async throws {
        try await Self.withStreams(3, batchedSends: batchedSends, maxBufferedBytes: 16 << 20) { streams, clients, server in
            let group = HTTPBroadcastGroup.streams(streams)
            let events = (0..<12).map { Self.event($0, size: 40 * 1024) }  // 480 KiB each
            #expect(events.reduce(0) { $0 + $1.count } > IOLoop.ringArenaBytes)
            Self.whileLoopsAreBusy(server) { for event in events { group.send([event]) } }
            Self.expectRingUse(server, batchedSends: batchedSends)
            let last = Self.event(99)
            Self.push([last], to: group, on: server)
            Self.expectEachReads(events + [last], clients)
        }
    }
}
