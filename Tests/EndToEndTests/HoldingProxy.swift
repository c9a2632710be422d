import Foundation
import HearthTesting
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A TCP proxy on 127.0.0.1 (a free port) in front of `target`, that can hold the bytes:
/// while `hold` is on it keeps reading from both sides (so TCP acknowledges everything and
/// its own timeouts see nothing wrong) and forwards nothing: a database that went silent
/// behind a partition. Off again, it forwards what it held, then what comes.
final class HoldingProxy: Sendable {
    let port: Int
    private let listener: Int32
    private let target: Int
    private let holding = Atomic<Bool>(false)
    private let sockets = Mutex<[Int32]>([])

    init(target: Int) throws {
        self.target = target
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound, listen(fd, 64) == 0 else { throw CurlError.failed(status: errno, output: "proxy: cannot listen") }
        listener = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    /// Whether bytes are held now.
    var hold: Bool {
        get { holding.load(ordering: .sequentiallyConsistent) }
        set { holding.store(newValue, ordering: .sequentiallyConsistent) }
    }

    /// Closes the listener and every connection.
    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        for fd in sockets.withLock({ $0 }) { shutdown(fd, Int32(SHUT_RDWR)) }
    }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            guard client >= 0 else { return }
            let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            let connected = connectToLoopback(server, port: target) == 0
            guard connected else {
                close(client)
                close(server)
                continue
            }
            sockets.withLock { $0 += [client, server] }
            Thread.detachNewThread { [self] in pump(from: client, to: server) }
            Thread.detachNewThread { [self] in pump(from: server, to: client) }
        }
    }

    /// Copies `from` to `to` until either ends, keeping what arrives while held.
    private func pump(from: Int32, to: Int32) {
        var held: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            var descriptor = pollfd(fd: from, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, 50)
            if !hold && !held.isEmpty {
                guard send(to, held, held.count, Int32(MSG_NOSIGNAL)) == held.count else { break }
                held = []
            }
            if ready <= 0 { continue }
            let count = read(from, &buffer, buffer.count)
            if count <= 0 { break }
            if hold {
                held += buffer[0..<count]
            } else {
                guard send(to, buffer, count, Int32(MSG_NOSIGNAL)) == count else { break }
            }
        }
        shutdown(from, Int32(SHUT_RDWR))
        shutdown(to, Int32(SHUT_RDWR))
    }
}
