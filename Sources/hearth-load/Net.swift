#if canImport(Glibc)
import Glibc
#endif
import HearthSystem

/// Outgoing loopback connections from several source addresses (127.0.0.1, 127.0.0.2, …):
/// each source address has its own ephemeral port range, so counts beyond one range work.
enum Net {
    /// `IP_BIND_ADDRESS_NO_PORT` (Linux ≥ 4.2, <netinet/in.h>; not in Swift's Glibc module):
    /// bind() keeps the port open until connect() picks one for the 4-tuple, so binding a
    /// source address does not use up ports for every destination.
    static let ipBindAddressNoPort: Int32 = 24

    /// 127.0.0.<n> (n ≥ 1) and `port` as a sockaddr_storage.
    static func loopback(_ n: Int, port: Int) -> (sockaddr_storage, socklen_t) {
        var storage = sockaddr_storage()
        withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { address in
                address.pointee.sin_family = sa_family_t(AF_INET)
                address.pointee.sin_port = in_port_t(UInt16(port).bigEndian)
                address.pointee.sin_addr.s_addr = in_addr_t((UInt32(0x7F00_0000) | UInt32(n)).bigEndian)
            }
        }
        return (storage, socklen_t(MemoryLayout<sockaddr_in>.size))
    }

    /// A non-blocking TCP socket bound to 127.0.0.<source>, connecting to 127.0.0.1:`port`
    /// (TCP_NODELAY: small requests go at once). The descriptor is closed on failure.
    static func connect(port: Int, source: Int) throws(SystemError) -> (fd: Int32, connected: Bool) {
        let fd = try Syscall.socket(family: AF_INET)
        do {
            try Syscall.setOption(fd, level: Int32(IPPROTO_TCP), name: TCP_NODELAY, value: 1)
            if source != 1 {
                try Syscall.setOption(fd, level: Int32(IPPROTO_IP), name: ipBindAddressNoPort, value: 1)
                var (local, localLength) = loopback(source, port: 0)
                try Syscall.bind(fd, &local, localLength)
            }
            var (remote, remoteLength) = loopback(1, port: port)
            let result = try Syscall.connect(fd, to: &remote, remoteLength)
            return (fd, result == .connected)
        } catch {
            try? Syscall.close(fd)
            throw error
        }
    }

    /// Sends all of `bytes` now or reports how much went: a short count means the socket's
    /// buffer is full, which for a request of a few hundred bytes on a fresh loopback
    /// socket does not happen; the caller treats it as a failure of that connection.
    static func sendAll(_ fd: Int32, _ bytes: [UInt8]) throws(SystemError) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let count = try bytes.withUnsafeBytes { raw in
                Result { () throws(SystemError) -> Int in try Syscall.sendSome(fd, UnsafeRawBufferPointer(rebasing: raw[sent...])) }
            }.get()
            if count == 0 { return false }
            sent += count
        }
        return true
    }
}
