#if canImport(Glibc)
import Glibc
#endif
import CSystem

/// The outcome of a non-blocking `connect`.
public enum ConnectResult: Sendable, Equatable {
    case connected
    /// `EINPROGRESS`: wait until the socket is writable, then read `socketError`.
    case inProgress
}

/// Non-blocking outgoing connections, threads and process facts: what an event loop over
/// many client sockets needs (the load generator, hearth-load; readiness: `EventPoll`).
/// Same rules as `Syscall`: EINTR retried, typed errors.
extension Syscall {
    // MARK: Outgoing connections, non-blocking

    /// `connect` on a non-blocking socket (`socket(family:)`): `.inProgress` until the
    /// socket turns writable, then `socketError` tells whether it worked.
    public static func connect(_ fd: Int32, to address: UnsafePointer<sockaddr_storage>, _ length: socklen_t) throws(SystemError) -> ConnectResult {
        while true {
            let result = address.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, length) }
            if result == 0 { return .connected }
            let code = Glibc.errno
            switch code {
            case EINTR:
                // The attempt goes on in the background; a retry would say EALREADY.
                return .inProgress
            case EINPROGRESS:
                return .inProgress
            case EBADF, EFAULT:
                preconditionFailure("connect: a bug in the caller (errno \(code))")
            default:
                throw SystemError(errno: code, call: "connect")
            }
        }
    }

    /// `getsockopt(SO_ERROR)`: 0, or the errno of a finished non-blocking `connect`.
    public static func socketError(_ fd: Int32) throws(SystemError) -> Int32 {
        var value: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        _ = try blocking("getsockopt") { Int(getsockopt(fd, SOL_SOCKET, SO_ERROR, &value, &length)) }
        return value
    }

    /// `send` of as much of `buffer` as the socket takes now, with `MSG_NOSIGNAL`; the
    /// number of bytes sent (0 when it would block).
    public static func sendSome(_ fd: Int32, _ buffer: UnsafeRawBufferPointer) throws(SystemError) -> Int {
        switch try send(fd, buffer) {
        case .done(let count): return count
        case .wouldBlock: return 0
        }
    }

    // MARK: Files and process facts

    /// The first `limit` bytes of a (small) file, e.g. under /proc.
    public static func readFile(_ path: String, limit: Int) throws(SystemError) -> [UInt8] {
        let fd = Int32(try blocking("open") { Int(Glibc.open(path, O_RDONLY | O_CLOEXEC)) })
        defer { try? close(fd) }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, limit), alignment: 1)
        defer { buffer.deallocate() }
        var filled = 0
        while filled < limit {
            let count = try blocking("read") { Glibc.read(fd, buffer.baseAddress! + filled, limit - filled) }
            if count == 0 { break }
            filled += count
        }
        return Array(UnsafeRawBufferPointer(rebasing: buffer[0..<filled]))
    }

    /// Writes all of `bytes` to `fd` (a file or pipe; blocking).
    public static func writeAll(_ fd: Int32, _ bytes: [UInt8]) throws(SystemError) {
        var written = 0
        while written < bytes.count {
            let count = try bytes.withUnsafeBytes { raw in
                Result { () throws(SystemError) -> Int in
                    try blocking("write") { Glibc.write(fd, raw.baseAddress! + written, raw.count - written) }
                }
            }.get()
            written += count
        }
    }

    /// Appends `bytes` to the file at `path` (created with mode 0644 when missing).
    public static func append(_ bytes: [UInt8], toFile path: String) throws(SystemError) {
        let fd = Int32(try blocking("open") { Int(Glibc.open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)) })
        defer { try? close(fd) }
        try writeAll(fd, bytes)
    }

    /// The CPU time (user + system) this process has used, in seconds (`getrusage(RUSAGE_SELF)`).
    public static func processCPUSeconds() -> Double {
        var usage = rusage()
        _ = getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    /// The CPU-time clock of the calling thread (`pthread_getcpuclockid`), which any thread
    /// of the process may read with `cpuSeconds(of:)` while the thread lives.
    public static func currentThreadCPUClock() -> clockid_t {
        var clock = clockid_t()
        _ = pthread_getcpuclockid(pthread_self(), &clock)
        return clock
    }

    /// Seconds on a CPU-time clock (`currentThreadCPUClock()`).
    public static func cpuSeconds(of clock: clockid_t) -> Double {
        seconds(on: clock)
    }

    /// Sleeps `seconds` (nanosleep, resumed after a signal).
    public static func sleep(seconds: Double) {
        guard seconds > 0 else { return }
        var request = timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - Double(Int(seconds))) * 1e9))
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0 && Glibc.errno == EINTR { request = remaining }
    }

    // MARK: Threads

    /// Starts a thread running `body` (`pthread_create`); `joinThread` waits for it.
    public static func spawnThread(_ body: @escaping @Sendable () -> Void) throws(SystemError) -> pthread_t {
        final class Box: Sendable {
            let body: @Sendable () -> Void
            init(_ body: @escaping @Sendable () -> Void) { self.body = body }
        }
        let context = Unmanaged.passRetained(Box(body)).toOpaque()
        var thread = pthread_t()
        let code = pthread_create(&thread, nil, { raw in
            let box = Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue()
            box.body()
            return nil
        }, context)
        guard code == 0 else {
            Unmanaged<Box>.fromOpaque(context).release()
            throw SystemError(errno: code, call: "pthread_create")
        }
        return thread
    }

    public static func joinThread(_ thread: pthread_t) {
        _ = pthread_join(thread, nil)
    }

    /// Lets a thread end on its own (`pthread_detach`): nothing joins it.
    public static func detachThread(_ thread: pthread_t) {
        _ = pthread_detach(thread)
    }

    /// Waits until `fd` can be read (or has an error or a hang-up, which a read then
    /// reports), at most `timeoutMilliseconds` (negative: without limit). A signal's `EINTR`
    /// waits again for the time left. True when it became ready, false when the time ran out.
    public static func waitReadable(_ fd: Int32, timeoutMilliseconds: Int32) throws(SystemError) -> Bool {
        try wait(fd, for: POLLIN, timeoutMilliseconds: timeoutMilliseconds)
    }

    /// `waitReadable` for output: until `fd` takes some (`POLLOUT`), or has an error or a
    /// hang-up, which a write then reports.
    public static func waitWritable(_ fd: Int32, timeoutMilliseconds: Int32) throws(SystemError) -> Bool {
        try wait(fd, for: POLLOUT, timeoutMilliseconds: timeoutMilliseconds)
    }

    private static func wait(_ fd: Int32, for events: Int32, timeoutMilliseconds: Int32) throws(SystemError) -> Bool {
        let deadline = timeoutMilliseconds < 0 ? nil : monotonicSeconds() + Double(timeoutMilliseconds) / 1000
        while true {
            var descriptor = pollfd(fd: fd, events: Int16(events), revents: 0)
            let wait = deadline.map { Int32(max(0, (($0 - monotonicSeconds()) * 1000).rounded(.up))) } ?? -1
            let ready = Glibc.poll(&descriptor, 1, wait)
            if ready >= 0 { return ready > 0 }
            let code = Glibc.errno
            if code == EINTR { continue }
            throw SystemError(errno: code, call: "poll")
        }
    }

    /// Shuts a socket down both ways without closing its descriptor (which may be another
    /// library's to close): a peer that stopped answering no longer holds a reader.
    public static func shutdownBothWays(_ fd: Int32) {
        _ = Glibc.shutdown(fd, Int32(SHUT_RDWR))
    }

    /// `CLOCK_MONOTONIC` in seconds: the clock every time stamp of a measurement uses.
    @inline(__always)
    public static func monotonicSeconds() -> Double {
        seconds(on: CLOCK_MONOTONIC)
    }

    @inline(__always)
    private static func seconds(on clock: clockid_t) -> Double {
        var now = timespec()
        _ = clock_gettime(clock, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    /// `CLOCK_REALTIME` in milliseconds since 1970 (what a `createdAt` field holds).
    public static func wallClockMilliseconds() -> Int64 {
        var now = timespec()
        _ = clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }

    private static func seconds(_ value: timeval) -> Double {
        Double(value.tv_sec) + Double(value.tv_usec) / 1e6
    }
}

/// One epoll instance (`epoll_create1(EPOLL_CLOEXEC)`) and its event buffer: register
/// descriptors with a token (`add`, `modify`, `remove`: from any thread, as `epoll_ctl`
/// allows), then wait and read back (token, events) pairs, on one thread only (the buffer
/// is that thread's).
public final class EventPoll {
    public static let readable = EPOLLIN.rawValue
    public static let writable = EPOLLOUT.rawValue
    /// The peer shut down its side (`EPOLLRDHUP`).
    public static let peerClosed = EPOLLRDHUP.rawValue
    public static let hangUp = EPOLLHUP.rawValue
    public static let error = EPOLLERR.rawValue
    /// Reported once, then disarmed until `modify` arms the descriptor again.
    public static let oneShot = EPOLLONESHOT.rawValue

    private let fd: Int32
    private let events: UnsafeMutableBufferPointer<epoll_event>

    /// `capacity`: events taken per `wait`.
    public init(capacity: Int) throws(SystemError) {
        fd = Int32(try Syscall.blocking("epoll_create1") { Int(epoll_create1(Int32(EPOLL_CLOEXEC))) })
        events = .allocate(capacity: max(1, capacity))
    }

    deinit {
        try? Syscall.close(fd)
        events.deallocate()
    }

    public func add(_ descriptor: Int32, events mask: UInt32, token: UInt64) throws(SystemError) {
        try control(EPOLL_CTL_ADD, descriptor, mask, token)
    }

    public func modify(_ descriptor: Int32, events mask: UInt32, token: UInt64) throws(SystemError) {
        try control(EPOLL_CTL_MOD, descriptor, mask, token)
    }

    /// Stops watching `descriptor` (before it is closed).
    public func remove(_ descriptor: Int32) throws(SystemError) {
        try control(EPOLL_CTL_DEL, descriptor, 0, 0)
    }

    /// Waits up to `timeoutMilliseconds` (−1: forever); the number of events ready, 0 on
    /// timeout or when a signal ended the wait (the caller's loop checks its deadlines).
    public func wait(timeoutMilliseconds: Int32) throws(SystemError) -> Int {
        let result = epoll_wait(fd, events.baseAddress, Int32(clamping: events.count), timeoutMilliseconds)
        if result >= 0 { return Int(result) }
        let code = Glibc.errno
        if code == EINTR { return 0 }
        if code == EBADF || code == EFAULT { preconditionFailure("epoll_wait: a bug in the caller (errno \(code))") }
        throw SystemError(errno: code, call: "epoll_wait")
    }

    /// The token and event mask of the `index`th event of the last `wait`.
    public func event(at index: Int) -> (token: UInt64, events: UInt32) {
        (events[index].data.u64, events[index].events)
    }

    private func control(_ operation: Int32, _ descriptor: Int32, _ mask: UInt32, _ token: UInt64) throws(SystemError) {
        var event = epoll_event()
        event.events = mask
        event.data.u64 = token
        _ = try Syscall.blocking("epoll_ctl") { Int(epoll_ctl(fd, operation, descriptor, &event)) }
    }
}

/// An `eventfd` (non-blocking, close-on-exec) that one thread signals to wake another out of
/// `EventPoll.wait`, where it is registered for reading.
public final class EventWaker: Sendable {
    public let descriptor: Int32

    public init() throws(SystemError) {
        descriptor = Int32(try Syscall.blocking("eventfd") { Int(eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))) })
    }

    deinit { try? Syscall.close(descriptor) }

    /// Makes the descriptor readable (from any thread). A full counter (EAGAIN) already is.
    public func signal() {
        var one: UInt64 = 1
        _ = try? Syscall.blocking("write") { Glibc.write(descriptor, &one, 8) }
    }

    /// Reads the counter back to zero (on the waiting thread); EAGAIN when it already was.
    public func drain() {
        var value: UInt64 = 0
        _ = try? Syscall.blocking("read") { Glibc.read(descriptor, &value, 8) }
    }
}
