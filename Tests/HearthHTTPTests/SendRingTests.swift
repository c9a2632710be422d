#if canImport(Glibc)
import Glibc
#endif
import HearthSystem
import HearthTesting
import Synchronization
import Testing

/// io_uring sends from literals: socket pairs, a ring, what each send reports.
@Suite("SendRing")
struct SendRingTests {
    /// A connected pair of non-blocking stream sockets.
    static func pair() throws -> (sender: Int32, receiver: Int32) {
        var fds: [Int32] = [0, 0]
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        try #require(socketpair(AF_UNIX, type, 0, &fds) == 0)
        return (fds[0], fds[1])
    }

    static func readAll(_ fd: Int32) -> [UInt8] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let got = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if got <= 0 { return bytes }
            bytes += chunk[0..<got]
        }
    }

    @Test func theRingIsMadeWhereTheKernelAllowsIt() {
        do {
            let ring = try SendRing(capacity: 8)
            #expect(ring.capacity == 8)
            #expect(ring.inFlight == 0)
            #expect(ioUringAllowed())
        } catch {
            // Refused: only where the kernel says so, and with its reason.
            #expect(!ioUringAllowed())
            #expect(error.errno == EPERM || error.errno == ENOSYS)
        }
    }

    @Test(.enabled(if: ioUringAllowed()))
    func eachSendReachesItsSocketAndReportsWhatItTook() throws {
        let ring = try SendRing(capacity: 8)
        let pairs = try (0..<8).map { _ in try Self.pair() }
        defer { for (a, b) in pairs { close(a); close(b) } }
        let payloads = (0..<8).map { index in [UInt8](repeating: UInt8(65 + index), count: 100 + index) }
        var results: [UInt64: Int32] = [:]
        // One buffer holds every payload; it is not touched until the flush returned.
        let joined = payloads.flatMap { $0 }
        try joined.withUnsafeBytes { raw throws in
            var start = 0
            for (index, payload) in payloads.enumerated() {
                let buffer = UnsafeRawBufferPointer(rebasing: raw[start..<(start + payload.count)])
                #expect(ring.queue(pairs[index].sender, buffer, tag: UInt64(index)))
                start += payload.count
            }
            #expect(ring.isFull)
            #expect(!ring.queue(pairs[0].sender, raw, tag: 99))  // full: refused, not queued
            try ring.flush { tag, result in results[tag] = result }
        }
        #expect(ring.inFlight == 0)
        #expect(results.count == 8)
        for index in 0..<8 {
            #expect(results[UInt64(index)] == Int32(payloads[index].count))
            #expect(Self.readAll(pairs[index].receiver) == payloads[index])
        }
    }

    @Test(.enabled(if: ioUringAllowed()))
    func aFullSocketTakesWhatFitsThenReportsEAGAINWithoutWaiting() throws {
        let ring = try SendRing(capacity: 4)
        let (sender, receiver) = try Self.pair()
        defer { close(sender); close(receiver) }
        let big = [UInt8](repeating: 7, count: 8 << 20)  // far more than a socket buffers
        var first: Int32 = 0, second: Int32 = 0
        try big.withUnsafeBytes { raw throws in
            #expect(ring.queue(sender, raw, tag: 1))
            try ring.flush { _, result in first = result }
            #expect(ring.queue(sender, raw, tag: 2))
            try ring.flush { _, result in second = result }
        }
        #expect(first > 0 && Int(first) < big.count)
        #expect(second == -EAGAIN)
        #expect(Self.readAll(receiver).count == Int(first))
    }

    @Test(.enabled(if: ioUringAllowed()))
    func aSocketWhosePeerIsGoneReportsEPIPE() throws {
        let ring = try SendRing(capacity: 4)
        let (sender, receiver) = try Self.pair()
        defer { close(sender) }
        close(receiver)
        let bytes: [UInt8] = Array("data: 1\n\n".utf8)
        var result: Int32 = 0
        try bytes.withUnsafeBytes { raw throws in
            #expect(ring.queue(sender, raw, tag: 0))
            try ring.flush { _, got in result = got }  // no SIGPIPE: MSG_NOSIGNAL
        }
        #expect(result == -EPIPE)
    }

    @Test(.enabled(if: ioUringAllowed()))
    func anEmptyFlushReturnsAtOnce() throws {
        let ring = try SendRing(capacity: 4)
        var called = 0
        try ring.flush { _, _ in called += 1 }
        #expect(called == 0)
    }

    /// A signal during `io_uring_enter` (`EINTR`) and a kernel short of memory for the
    /// submission (`EAGAIN`): the flush calls again, and every send goes out once.
    @Test(.enabled(if: ioUringAllowed()), arguments: [EINTR, EAGAIN])
    func anInterruptedOrRefusedEnterIsMadeAgain(code: Int32) throws {
        let calls = Mutex(0)
        let ring = try SendRing(capacity: 4) { kernel in
            let call = calls.withLock { calls in
                calls += 1
                return calls
            }
            if call > 1 { return kernel() }
            errno = code
            return -1
        }
        let pairs = try (0..<3).map { _ in try Self.pair() }
        defer { for (a, b) in pairs { close(a); close(b) } }
        let bytes: [UInt8] = Array("data: again\n\n".utf8)
        var results: [UInt64: Int32] = [:]
        try bytes.withUnsafeBytes { raw throws in
            for (index, pair) in pairs.enumerated() { #expect(ring.queue(pair.sender, raw, tag: UInt64(index))) }
            try ring.flush { tag, result in results[tag] = result }
        }
        #expect(calls.withLock { $0 } == 2)
        #expect(ring.inFlight == 0)
        for index in 0..<3 {
            #expect(results[UInt64(index)] == Int32(bytes.count))
            #expect(Self.readAll(pairs[index].receiver) == bytes)  // once, not twice
        }
    }

    /// Any other failure of `io_uring_enter` is thrown, with its `errno`, and the sends it
    /// did not report stay in flight: their outcome is unknown to the caller.
    @Test(.enabled(if: ioUringAllowed()))
    func aFailedEnterIsThrownWithItsCause() throws {
        let ring = try SendRing(capacity: 4) { _ in
            errno = ENXIO
            return -1
        }
        let (sender, receiver) = try Self.pair()
        defer { close(sender); close(receiver) }
        let bytes: [UInt8] = Array("data: 1\n\n".utf8)
        var reported = 0
        var thrown: SystemError?
        bytes.withUnsafeBytes { raw in
            #expect(ring.queue(sender, raw, tag: 0))
            do throws(SystemError) {
                try ring.flush { _, _ in reported += 1 }
            } catch {
                thrown = error
            }
        }
        #expect(thrown?.errno == ENXIO)
        #expect(thrown.map { "\($0)" }?.contains("io_uring_enter") == true)
        #expect(reported == 0 && ring.inFlight == 1)
    }
}
