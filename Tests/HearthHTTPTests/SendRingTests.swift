#if canImport(Glibc)
import Glibc
#endif
import HearthSystem
import Testing

/// Whether this kernel lets an unprivileged-or-root process make an io_uring ring:
/// `kernel.io_uring_disabled` absent or 0 (1 and 2 refuse it to this process; a seccomp
/// filter would too, and is not expected where the tests run).
func ioUringAllowed() -> Bool {
    guard let text = try? Syscall.readFile("/proc/sys/kernel/io_uring_disabled", limit: 16) else { return true }
    return text.first == UInt8(ascii: "0")
}

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
}
