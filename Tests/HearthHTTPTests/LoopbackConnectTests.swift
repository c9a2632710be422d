#if canImport(Glibc)
import Glibc
#endif
import Foundation
import HearthSystem
import HearthTesting
import Synchronization
import Testing

/// The live clients' connect (`connectToLoopback`) survives a signal: on a socket with a
/// send timeout an interrupted `connect` fails with `EINTR` (signal(7)) while the kernel
/// goes on connecting, and a test's client once failed that way ("connect: errno 4") under
/// a full CI run. Here a connect is made to wait (the listener's accept queue is full), a
/// signal interrupts it, and the helper must still end up connected.
@Suite struct LoopbackConnectTests {
#if arch(x86_64)
    static let connectCall = "42"
    static let pollCalls: Set<String> = ["7", "271"]  // poll, ppoll
#else
    static let connectCall = "203"
    static let pollCalls: Set<String> = ["73"]  // ppoll
#endif

    /// The system call each of this process's threads is in, by thread: the first fields
    /// of /proc/self/task/<tid>/syscall (number, then the arguments in hex).
    static func threadsInSystemCalls() -> [String: [String]] {
        var found: [String: [String]] = [:]
        for task in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? [] {
            guard let text = try? String(contentsOfFile: "/proc/self/task/\(task)/syscall", encoding: .utf8) else { continue }
            found[task] = text.split(separator: " ").map(String.init)
        }
        return found
    }

    @Test func aConnectInterruptedByASignalStillConnects() throws {
        // SIGUSR1 with a handler that does nothing and no SA_RESTART.
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { _ in }
        sigemptyset(&action.sa_mask)
        action.sa_flags = 0
        #expect(sigaction(SIGUSR1, &action, nil) == 0)

        // A listener whose accept queue is full: a connect to it waits for the next
        // retransmission of its SYN.
        let (listener, port) = try bindLoopback(listen: false)
        defer { close(listener) }
        try #require(listen(listener, 0) == 0)
        var fillers: [Int32] = []
        for _ in 0..<4 {
            let filler = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            _ = connectToLoopback(filler, port: port)  // 0 or EINPROGRESS: queued, or waiting
            fillers.append(filler)
        }

        // The client, with the live clients' send timeout, connects on a thread of its own.
        let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        defer { close(client) }
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(client, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let outcome = Mutex<Int32?>(nil)
        let thread = try Syscall.spawnThread {
            // A new thread inherits its creator's mask, and a test runs on a pool thread
            // that blocks signals: take SIGUSR1 here.
            var signals = sigset_t()
            sigemptyset(&signals)
            sigaddset(&signals, SIGUSR1)
            pthread_sigmask(SIG_UNBLOCK, &signals, nil)
            let code = connectToLoopback(client, port: port, timeoutSeconds: 30)
            outcome.withLock { $0 = code }
        }

        // Wait until that thread is inside connect(client, …), then interrupt it.
        let descriptor = "0x" + String(client, radix: 16)
        var task: String?
        while task == nil && outcome.withLock({ $0 }) == nil {
            task = Self.threadsInSystemCalls().first { $0.value.first == Self.connectCall && $0.value.dropFirst().first == descriptor }?.key
            sched_yield()
        }
        let waitingTask = try #require(task, "the connect did not wait: the accept queue was not full")
        #expect(pthread_kill(thread, SIGUSR1) == 0)
        // The interrupted connect returns, and the helper waits for the socket instead.
        var call = ""
        while !Self.pollCalls.contains(call) && outcome.withLock({ $0 }) == nil {
            call = Self.threadsInSystemCalls()[waitingTask]?.first ?? ""
            sched_yield()
        }
        #expect(Self.pollCalls.contains(call), "after the signal the thread was in system call \(call), not a wait for the socket")

        // Room in the queue: the waiting SYNs of the fillers stop, the queued ones are taken.
        for filler in fillers { close(filler) }
        var accepted: [Int32] = []
        var ready = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
        while outcome.withLock({ $0 }) == nil {
            if poll(&ready, 1, 100) > 0 {
                let connection = accept(listener, nil, nil)
                if connection >= 0 { accepted.append(connection) }
            }
        }
        Syscall.joinThread(thread)
        for connection in accepted { close(connection) }
        #expect(outcome.withLock { $0 } == 0)
        var peer = sockaddr_in()
        var peerLength = socklen_t(MemoryLayout<sockaddr_in>.size)
        let connected = withUnsafeMutablePointer(to: &peer) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(client, $0, &peerLength) }
        }
        #expect(connected == 0 && Int(UInt16(bigEndian: peer.sin_port)) == port)
    }
}
