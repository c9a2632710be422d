import CURingBench
import Glibc
import Synchronization

// sendfloor: N loopback TCP connections; receiver threads read them as the fan-out client
// does (epoll, recv until EAGAIN); the main thread sends BYTES to every connection RATE
// times a second, phase after phase, either with one send() per connection or with
// io_uring (liburing: IORING_OP_SEND for every connection, submitted in batches of the
// ring's size, completions reaped in batches). One JSON line per phase: the sending
// thread's CPU per send (the analogue of a server's CPU per push; on loopback it includes
// the receiver's TCP input and wake-up), and the receivers' CPU beside it.

enum Limits {
    static let maxConnections = 200_000
    static let maxBytes = 65_536
    static let ringEntries: UInt32 = 4_096
    static let maxPhases = 64
    static let receiveBufferBytes = 256 * 1024
    static let epollBatch: Int32 = 1_024
    static let drainSeconds = 30.0
}

struct Options {
    var connections = 10_000
    var rate = 10.0
    var seconds = 10.0
    var modes = ["send", "uring", "uring", "send"]
    var receivers = 2
    var bytes = 218
}

func fail(_ message: String) -> Never {
    let text = Array("sendfloor: \(message)\n".utf8)
    _ = text.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    exit(1)
}

func parse(_ arguments: [String]) -> Options {
    var options = Options()
    var index = 0
    while index < arguments.count {
        guard index + 1 < arguments.count else { fail("\(arguments[index]) needs a value") }
        let name = arguments[index], value = arguments[index + 1]
        switch name {
        case "--connections":
            guard let n = Int(value), (1...Limits.maxConnections).contains(n) else { fail("--connections: 1...\(Limits.maxConnections)") }
            options.connections = n
        case "--rate":
            guard let r = Double(value), r > 0, r <= 1_000 else { fail("--rate: (0, 1000]") }
            options.rate = r
        case "--seconds":
            guard let s = Double(value), s > 0, s <= 3_600 else { fail("--seconds: (0, 3600]") }
            options.seconds = s
        case "--modes":
            let modes = value.split(separator: ",").map(String.init)
            guard !modes.isEmpty, modes.count <= Limits.maxPhases, modes.allSatisfy({ $0 == "send" || $0 == "uring" }) else {
                fail("--modes: up to \(Limits.maxPhases) of send,uring")
            }
            options.modes = modes
        case "--receivers":
            guard let n = Int(value), (1...64).contains(n) else { fail("--receivers: 1...64") }
            options.receivers = n
        case "--bytes":
            guard let n = Int(value), (1...Limits.maxBytes).contains(n) else { fail("--bytes: 1...\(Limits.maxBytes)") }
            options.bytes = n
        default:
            fail("unknown option \(name); usage: sendfloor [--connections 10000] [--rate 10] [--seconds 10] [--modes send,uring,uring,send] [--receivers 2] [--bytes 218]")
        }
        index += 2
    }
    return options
}

func seconds(_ clock: clockid_t) -> Double {
    var now = timespec()
    clock_gettime(clock, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}

func check(_ result: Int32, _ call: String) {
    if result < 0 { fail("\(call): errno \(errno)") }
}

/// One receiver thread: its shard of the client sockets, read until `stop`.
/// `@unchecked Sendable`: `fds` is written before the thread starts and only read after;
/// the counters are atomics.
final class Receiver: @unchecked Sendable {
    let fds: [Int32]
    let received = Atomic<Int>(0)
    let cpuNanoseconds = Atomic<Int>(0)
    let stop = Atomic<Bool>(false)

    init(fds: [Int32]) { self.fds = fds }

    func run() {
        let poll = epoll_create1(Int32(EPOLL_CLOEXEC))
        check(poll, "epoll_create1")
        for fd in fds {
            var event = epoll_event()
            event.events = EPOLLIN.rawValue
            event.data.fd = fd
            check(epoll_ctl(poll, EPOLL_CTL_ADD, fd, &event), "epoll_ctl")
        }
        let events = UnsafeMutablePointer<epoll_event>.allocate(capacity: Int(Limits.epollBatch))
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: Limits.receiveBufferBytes, alignment: 16)
        var total = 0
        while !stop.load(ordering: .relaxed) {
            let count = epoll_wait(poll, events, Limits.epollBatch, 50)
            if count < 0 { continue }
            for index in 0..<Int(count) {
                let fd = events[index].data.fd
                while true {
                    let n = recv(fd, buffer, Limits.receiveBufferBytes, 0)
                    if n <= 0 { break }
                    total += n
                    if n < Limits.receiveBufferBytes { break }
                }
            }
            received.store(total, ordering: .relaxed)
            cpuNanoseconds.store(Int(seconds(CLOCK_THREAD_CPUTIME_ID) * 1e9), ordering: .relaxed)
        }
        close(poll)
    }
}

final class ThreadBody {
    let body: () -> Void
    init(_ body: @escaping () -> Void) { self.body = body }
}

func spawn(_ body: @escaping () -> Void) -> pthread_t {
    var thread = pthread_t()
    let box = Unmanaged.passRetained(ThreadBody(body)).toOpaque()
    let result = pthread_create(&thread, nil, { raw in
        Unmanaged<ThreadBody>.fromOpaque(raw!).takeRetainedValue().body()
        return nil
    }, box)
    if result != 0 { fail("pthread_create: \(result)") }
    return thread
}

/// N connected pairs over 127.0.0.1: (server side, client side), client side non-blocking.
func connectPairs(_ count: Int) -> (servers: [Int32], clients: [Int32]) {
    let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    check(listener, "socket")
    var one: Int32 = 1
    setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = in_addr_t(UInt32(0x7F00_0001).bigEndian)
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
            check(bind(listener, raw, length), "bind")
            check(listen(listener, 4_096), "listen")
            check(getsockname(listener, raw, &length), "getsockname")
        }
    }
    var servers: [Int32] = [], clients: [Int32] = []
    for _ in 0..<count {
        let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        check(client, "socket")
        withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                check(connect(client, raw, socklen_t(MemoryLayout<sockaddr_in>.size)), "connect")
            }
        }
        let server = sendfloor_accept(listener)
        check(server, "accept4")
        setsockopt(server, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        setsockopt(client, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        check(fcntl(client, F_SETFL, fcntl(client, F_GETFL) | O_NONBLOCK), "fcntl")
        servers.append(server)
        clients.append(client)
    }
    close(listener)
    return (servers, clients)
}

/// Sends `payload` to every descriptor with io_uring: SQEs prepared for up to the ring's
/// entries, submitted with one io_uring_enter that also waits for them, completions
/// reaped in batches. Returns the sends that did not go whole.
func uringSend(_ ring: inout io_uring, _ fds: [Int32], _ payload: UnsafeRawBufferPointer,
               _ cqes: UnsafeMutablePointer<UnsafeMutablePointer<io_uring_cqe>?>) -> Int {
    var short = 0
    var start = 0
    while start < fds.count {
        let chunk = min(fds.count - start, Int(Limits.ringEntries))
        for index in start..<(start + chunk) {
            guard let sqe = io_uring_get_sqe(&ring) else { fail("io_uring_get_sqe: ring full") }
            io_uring_prep_send(sqe, fds[index], payload.baseAddress, payload.count, Int32(MSG_NOSIGNAL))
        }
        let submitted = io_uring_submit_and_wait(&ring, UInt32(chunk))
        if submitted < 0 { fail("io_uring_submit_and_wait: \(submitted)") }
        var seen = 0
        while seen < chunk {
            var got = Int(io_uring_peek_batch_cqe(&ring, cqes, UInt32(chunk - seen)))
            if got == 0 {
                let waited = io_uring_wait_cqe(&ring, cqes)
                if waited < 0 { fail("io_uring_wait_cqe: \(waited)") }
                got = 1
            }
            for index in 0..<got where cqes[index]!.pointee.res != Int32(payload.count) { short += 1 }
            io_uring_cq_advance(&ring, UInt32(got))
            seen += got
        }
        start += chunk
    }
    return short
}

func main() {
    let options = parse(Array(CommandLine.arguments.dropFirst()))
    signal(SIGPIPE, SIG_IGN)
    var limit = rlimit()
    getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
    limit.rlim_cur = limit.rlim_max
    setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
    guard Int(limit.rlim_cur) > 2 * options.connections + 64 else { fail("the open-file limit \(limit.rlim_cur) is too low") }

    let (servers, clients) = connectPairs(options.connections)
    var receivers: [Receiver] = []
    var threads: [pthread_t] = []
    for index in 0..<options.receivers {
        let lower = clients.count * index / options.receivers, upper = clients.count * (index + 1) / options.receivers
        let receiver = Receiver(fds: Array(clients[lower..<upper]))
        receivers.append(receiver)
        threads.append(spawn { receiver.run() })
    }
    var ring = io_uring()
    let initialized = io_uring_queue_init(Limits.ringEntries, &ring, 0)
    if initialized < 0 { fail("io_uring_queue_init: \(initialized)") }
    let cqes = UnsafeMutablePointer<UnsafeMutablePointer<io_uring_cqe>?>.allocate(capacity: Int(Limits.ringEntries))
    let payload = UnsafeMutableRawBufferPointer.allocate(byteCount: options.bytes, alignment: 16)
    payload.initializeMemory(as: UInt8.self, repeating: 0x61)
    let raw = UnsafeRawBufferPointer(payload)
    let ticks = max(1, Int((options.rate * options.seconds).rounded()))
    var expected = 0

    for (phase, mode) in options.modes.enumerated() {
        let receivedBefore = receivers.reduce(0) { $0 + $1.received.load(ordering: .relaxed) }
        let receiverCPUBefore = receivers.reduce(0) { $0 + $1.cpuNanoseconds.load(ordering: .relaxed) }
        let cpu0 = seconds(CLOCK_THREAD_CPUTIME_ID), process0 = seconds(CLOCK_PROCESS_CPUTIME_ID)
        let wall0 = seconds(CLOCK_MONOTONIC)
        var short = 0
        for tick in 0..<ticks {
            let due = wall0 + Double(tick) / options.rate
            var deadline = timespec(tv_sec: Int(due), tv_nsec: Int((due - due.rounded(.down)) * 1e9))
            while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, nil) == EINTR {}
            if mode == "send" {
                for fd in servers where send(fd, raw.baseAddress, raw.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) != raw.count {
                    short += 1
                }
            } else {
                short += uringSend(&ring, servers, raw, cqes)
            }
        }
        let cpu1 = seconds(CLOCK_THREAD_CPUTIME_ID)
        expected += ticks * servers.count * raw.count
        let drainEnd = seconds(CLOCK_MONOTONIC) + Limits.drainSeconds
        while receivers.reduce(0, { $0 + $1.received.load(ordering: .relaxed) }) < expected - short * raw.count
                && seconds(CLOCK_MONOTONIC) < drainEnd {
            usleep(10_000)
        }
        let wall1 = seconds(CLOCK_MONOTONIC), process1 = seconds(CLOCK_PROCESS_CPUTIME_ID)
        let received = receivers.reduce(0) { $0 + $1.received.load(ordering: .relaxed) } - receivedBefore
        let receiverCPU = Double(receivers.reduce(0) { $0 + $1.cpuNanoseconds.load(ordering: .relaxed) } - receiverCPUBefore) / 1e9
        let sends = ticks * servers.count
        let line = #"{"phase": \#(phase + 1), "mode": "\#(mode)", "connections": \#(servers.count), "bytes": \#(raw.count), "#
            + #""sends": \#(sends), "short": \#(short), "bytes_received": \#(received), "bytes_expected": \#(sends * raw.count), "#
            + #""sender_cpu_s": \#(cpu1 - cpu0), "sender_us_per_send": \#((cpu1 - cpu0) / Double(sends) * 1e6), "#
            + #""receivers_cpu_s": \#(receiverCPU), "process_cpu_s": \#(process1 - process0), "wall_s": \#(wall1 - wall0)}"#
        let bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
    }
    for receiver in receivers { receiver.stop.store(true, ordering: .relaxed) }
    for thread in threads { pthread_join(thread, nil) }
    io_uring_queue_exit(&ring)
}

main()
