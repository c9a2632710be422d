import Synchronization
import HearthSystem

/// A listening socket opened before the server that accepts on it is built, so a process
/// learns that its address is taken (or invalid) before it creates anything else:
/// `hearth serve` binds first and only then opens or creates the data directory and the
/// signing keys. Hand it to `HTTPServer.start(on:)`; closed when released unless a server
/// took it. Connections that arrive meanwhile wait in the kernel's backlog.
public final class BoundSocket: Sendable {
    public let host: String
    /// The port actually bound (the one the system chose when asked for 0).
    public let port: Int
    private let descriptor: Mutex<Int32?>

    public init(host: String, port: Int) throws {
        let (fd, bound) = try ListeningSocket.open(host: host, port: port)
        self.host = host
        self.port = bound
        descriptor = Mutex(fd)
    }

    /// The descriptor, handed over once (the taker closes it).
    func take() -> Int32? {
        descriptor.withLock { fd in
            defer { fd = nil }
            return fd
        }
    }

    deinit {
        if let fd = take() { try? Syscall.close(fd) }
    }
}
