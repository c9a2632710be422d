#if canImport(Glibc)
import Glibc
#endif
import CSystem

/// The outcome of a non-blocking call that may have nothing to do.
public enum IOResult<Value> {
    case done(Value)
    /// `EAGAIN`/`EWOULDBLOCK`: not an error; wait for readiness and try again.
    case wouldBlock
}

/// The one wrapper Hearth's system calls go through: the HTTP server's sockets, the
/// outgoing clients', and the files of the engines, backups and tools (docs/style.md §3
/// lists the few calls that do not).
///
/// - `EINTR` is retried (except for `close`, see `close(_:)`).
/// - `EAGAIN`/`EWOULDBLOCK` become `.wouldBlock`.
/// - `EBADF` and `EFAULT` mean we passed a stale descriptor or a bad pointer: a bug in this
///   module, never a condition to handle, so they trap (as SwiftNIO does).
/// - Anything else is a typed `SystemError` carrying `errno` and the call's name.
public enum Syscall {
    @inline(__always)
    public static func retrying(_ name: StaticString, _ body: () -> Int) throws(SystemError) -> IOResult<Int> {
        while true {
            let result = body()
            if result >= 0 { return .done(result) }
            let code = Glibc.errno
            switch code {
            case EINTR:
                continue
            case EAGAIN, EWOULDBLOCK:
                return .wouldBlock
            case EBADF, EFAULT:
                preconditionFailure("\(name): \(code == EBADF ? "EBADF" : "EFAULT") is a bug in the caller")
            default:
                throw SystemError(errno: code, call: "\(name)")
            }
        }
    }

    /// Raises the soft limit on open descriptors to the hard limit (what Go servers do at
    /// start): each connection and stream holds one. Returns the new soft limit.
    public static func raiseOpenFileLimit() throws(SystemError) -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else {
            throw SystemError(errno: Glibc.errno, call: "getrlimit")
        }
        if limit.rlim_cur < limit.rlim_max {
            limit.rlim_cur = limit.rlim_max
            guard setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else {
                throw SystemError(errno: Glibc.errno, call: "setrlimit")
            }
        }
        return Int(clamping: limit.rlim_cur)
    }

    /// For calls on blocking paths (setup), where "would block" cannot happen.
    @inline(__always)
    public static func blocking(_ name: StaticString, _ body: () -> Int) throws(SystemError) -> Int {
        switch try retrying(name, body) {
        case .done(let value): return value
        case .wouldBlock: throw SystemError(errno: EAGAIN, call: "\(name)")
        }
    }

    // MARK: Sockets

    /// A TCP socket, non-blocking and close-on-exec from birth.
    public static func socket(family: Int32) throws(SystemError) -> Int32 {
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        return Int32(try blocking("socket") { Int(Glibc.socket(family, type, 0)) })
    }

    public static func setOption(_ fd: Int32, level: Int32, name: Int32, value: Int32) throws(SystemError) {
        var value = value
        _ = try blocking("setsockopt") {
            Int(Glibc.setsockopt(fd, level, name, &value, socklen_t(MemoryLayout<Int32>.size)))
        }
    }

    public static func bind(_ fd: Int32, _ address: UnsafePointer<sockaddr_storage>, _ length: socklen_t) throws(SystemError) {
        _ = try blocking("bind") {
            address.withMemoryRebound(to: sockaddr.self, capacity: 1) { Int(Glibc.bind(fd, $0, length)) }
        }
    }

    public static func listen(_ fd: Int32, backlog: Int32) throws(SystemError) {
        _ = try blocking("listen") { Int(Glibc.listen(fd, backlog)) }
    }

    public static func localAddress(_ fd: Int32) throws(SystemError) -> sockaddr_storage {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = try blocking("getsockname") {
            withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Int(getsockname(fd, $0, &length)) }
            }
        }
        return storage
    }

    /// `accept4(SOCK_NONBLOCK | SOCK_CLOEXEC)`: the new descriptor never leaks into a child
    /// process and never blocks an I/O queue.
    public static func accept(_ fd: Int32, peer: inout sockaddr_storage) throws(SystemError) -> IOResult<Int32> {
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let flags = Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        let result = try retrying("accept4") {
            withUnsafeMutablePointer(to: &peer) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Int(hearth_accept4(fd, $0, &length, flags)) }
            }
        }
        switch result {
        case .done(let newFD): return .done(Int32(newFD))
        case .wouldBlock: return .wouldBlock
        }
    }

    /// `recv`; `.done(0)` is end of stream.
    @inline(__always)
    public static func receive(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(SystemError) -> IOResult<Int> {
        try retrying("recv") { Glibc.recv(fd, buffer.baseAddress, buffer.count, 0) }
    }

    /// `send` with `MSG_NOSIGNAL`: a peer that went away is an `EPIPE` error, never a signal.
    @inline(__always)
    public static func send(_ fd: Int32, _ buffer: UnsafeRawBufferPointer) throws(SystemError) -> IOResult<Int> {
        try retrying("send") { Glibc.send(fd, buffer.baseAddress, buffer.count, Int32(MSG_NOSIGNAL)) }
    }

    public static func shutdown(_ fd: Int32, _ how: Int32) throws(SystemError) {
        _ = try blocking("shutdown") { Int(Glibc.shutdown(fd, how)) }
    }

    /// `close` is never retried: on Linux the descriptor is released even when `close`
    /// reports `EINTR`, and a retry could close a number another thread just got.
    public static func close(_ fd: Int32) throws(SystemError) {
        if Glibc.close(fd) == 0 { return }
        let code = Glibc.errno
        if code == EINTR { return }
        if code == EBADF { preconditionFailure("close: EBADF is a bug in the caller") }
        throw SystemError(errno: code, call: "close")
    }

    // MARK: Outgoing connections (the mail sender)

    /// A blocking TCP connection to `host` (a name or an address literal) on `port`, with
    /// `timeoutSeconds` for the connect and for every later read and write
    /// (`SO_RCVTIMEO`/`SO_SNDTIMEO`: a timed-out call reports `.wouldBlock`). Tries each
    /// address the name resolves to; the descriptor is closed on every failure path.
    public static func connect(host: String, port: Int, timeoutSeconds: Int) throws(SystemError) -> Int32 {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else { throw SystemError(errno: ENOENT, call: "getaddrinfo") }
        defer { freeaddrinfo(first) }
        var lastError = SystemError(errno: ECONNREFUSED, call: "connect")
        var next: UnsafeMutablePointer<addrinfo>? = first
        while let info = next {
            next = info.pointee.ai_next
            let fd = Glibc.socket(info.pointee.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            if fd < 0 {
                lastError = SystemError(errno: Glibc.errno, call: "socket")
                continue
            }
            var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
            _ = Glibc.setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            _ = Glibc.setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            // A blocking connect interrupted by a signal goes on in the background; Hearth
            // handles its signals with Dispatch sources, so EINTR is not expected here, and
            // is reported like any failure (the caller retries the whole send).
            if Glibc.connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 { return fd }
            lastError = SystemError(errno: Glibc.errno, call: "connect")
            try? close(fd)
        }
        throw lastError
    }

    /// Ignore `SIGPIPE` process-wide; writes report `EPIPE` instead (docs/linux-notes.md
    /// pitfall 6).
    public static func ignoreSIGPIPE() {
        _ = Glibc.signal(SIGPIPE, SIG_IGN)
    }
}
