#if canImport(Glibc)
import Glibc
#endif
import CSystem
import HearthSystem

/// Creates the non-blocking, close-on-exec listening socket (the descriptor is closed on
/// every failure path) and reports the port actually bound.
enum ListeningSocket {
    static let backlog: Int32 = 1024

    static func open(host: String, port: Int) throws -> (fd: Int32, port: Int) {
        var literal = Substring(host)
        if literal.hasPrefix("[") && literal.hasSuffix("]") { literal = literal.dropFirst().dropLast() }
        guard (0...65_535).contains(port) else { throw HTTPServerError.invalidPort(port) }
        var address = sockaddr_storage()
        var length = socklen_t(0)
        let family = String(literal).withCString { hearth_sockaddr_make($0, UInt16(port), &address, &length) }
        guard family >= 0 else { throw HTTPServerError.invalidHost(host) }

        let fd = try Syscall.socket(family: family)
        do {
            try Syscall.setOption(fd, level: SOL_SOCKET, name: SO_REUSEADDR, value: 1)
            try Syscall.bind(fd, &address, length)
            try Syscall.listen(fd, backlog: backlog)
            var bound = try Syscall.localAddress(fd)
            return (fd, Int(hearth_sockaddr_port(&bound)))
        } catch {
            try? Syscall.close(fd)
            throw error
        }
    }
}
