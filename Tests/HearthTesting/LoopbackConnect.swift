#if canImport(Glibc)
import Glibc
#endif

/// Connects the blocking socket `fd` to 127.0.0.1:`port`: 0 once connected, else the
/// errno of the failure.
///
/// The live clients set a send timeout (`SO_SNDTIMEO`) as a safety net, and on such a
/// socket a signal that arrives during `connect` makes it fail with `EINTR` whatever the
/// handler's `SA_RESTART` (signal(7)), while the kernel goes on connecting. Calling
/// `connect` again would only report `EALREADY`; so after `EINTR` this waits for the
/// socket to become writable (at most `timeoutSeconds`) and takes the outcome from
/// `SO_ERROR`, as after a non-blocking connect. A test process gets such signals: the
/// children that end-to-end tests start send it `SIGCHLD` when they exit, and a connect
/// to a server whose accept queue is full waits for the next SYN retransmission.
public func connectToLoopback(_ fd: Int32, port: Int, timeoutSeconds: Int = 60) -> Int32 {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
    let result = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    if result == 0 { return 0 }
    let code = errno
    guard code == EINTR else { return code }
    var waiter = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
    while true {
        let ready = poll(&waiter, 1, Int32(timeoutSeconds * 1000))
        if ready > 0 { break }
        if ready == 0 { return ETIMEDOUT }
        if errno != EINTR { return errno }
    }
    var outcome: Int32 = 0
    var length = socklen_t(MemoryLayout<Int32>.size)
    guard getsockopt(fd, SOL_SOCKET, SO_ERROR, &outcome, &length) == 0 else { return errno }
    return outcome
}
