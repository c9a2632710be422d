#if canImport(Glibc)
import Glibc
#endif
import HearthSystem

/// Why an outgoing connection failed. Texts carry no payload (no addresses, no bytes), so
/// they are safe to log.
public enum ConnectionFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// The host name did not resolve.
    case unresolved
    /// Nobody listens there (`ECONNREFUSED`).
    case refused
    /// The connect, a read or a write took longer than the timeout.
    case timeout
    /// Any other system error (reset, unreachable network, ...).
    case system(SystemError)
    /// The TLS handshake, a certificate check, or a TLS read or write failed.
    case tls(String)

    public var description: String {
        switch self {
        case .unresolved: return "the host name does not resolve"
        case .refused: return "connection refused"
        case .timeout: return "timed out"
        case .system(let error): return "\(error)"
        case .tls(let why): return "TLS: \(why)"
        }
    }

    static func from(_ error: any Error) -> ConnectionFailure {
        guard let error = error as? SystemError else { return .system(SystemError(errno: EIO, call: "\(error)")) }
        switch error.errno {
        case ECONNREFUSED: return .refused
        case EINPROGRESS, ETIMEDOUT, EAGAIN: return .timeout  // a connect past SO_SNDTIMEO reports EINPROGRESS
        case ENOENT where error.call == "getaddrinfo": return .unresolved
        default: return .system(error)
        }
    }
}

/// One blocking TCP connection out (an HTTP request, an SMTP conversation), optionally
/// with TLS over it: connect with a timeout, write everything, read what is there. Every
/// system call goes through `Syscall`; the descriptor is closed by `close()` (or when the
/// value is dropped without it, by `deinit`).
///
/// Not `Sendable`: one connection belongs to the one exchange that opened it.
public final class OutgoingConnection {
    public let fd: Int32
    private var tls: TLSSession?
    private var closed = false

    /// Connects to `host:port`, with `timeoutSeconds` for the connect and for every later
    /// read and write.
    public init(host: String, port: Int, timeoutSeconds: Int) throws(ConnectionFailure) {
        do {
            fd = try Syscall.connect(host: host, port: port, timeoutSeconds: timeoutSeconds)
        } catch {
            throw ConnectionFailure.from(error)
        }
    }

    deinit { close() }

    /// Starts TLS on the connection (at once for https, after `STARTTLS` for SMTP).
    public func startTLS(host: String, caFile: String?) throws(ConnectionFailure) {
        do {
            tls = try TLSSession(fd: fd, host: host, caFile: caFile)
        } catch {
            throw .tls(error.description)
        }
    }

    public func close() {
        guard !closed else { return }
        closed = true
        tls = nil
        try? Syscall.close(fd)
    }

    /// Whether bytes arrived and are held by TLS, not yet read (see `TLSSession`).
    public var hasBufferedInput: Bool { tls?.hasBufferedInput ?? false }

    /// Writes all of `bytes`.
    public func write(_ bytes: [UInt8]) throws(ConnectionFailure) {
        if let tls {
            do { try tls.write(bytes) } catch { throw .tls(error.description) }
            return
        }
        var offset = 0
        while offset < bytes.count {
            let result: IOResult<Int>
            do {
                result = try bytes.withUnsafeBytes { buffer throws(SystemError) in
                    try Syscall.send(fd, UnsafeRawBufferPointer(rebasing: buffer[offset...]))
                }
            } catch {
                throw ConnectionFailure.from(error)
            }
            switch result {
            case .done(let count): offset += count
            case .wouldBlock: throw .timeout
            }
        }
    }

    /// Reads what is there (at most `into.count` bytes, waiting up to the timeout for the
    /// first); 0 at the end of the stream.
    public func read(into chunk: inout [UInt8]) throws(ConnectionFailure) -> Int {
        if let tls {
            do { return try tls.read(into: &chunk) } catch { throw .tls(error.description) }
        }
        let result: IOResult<Int>
        do {
            result = try chunk.withUnsafeMutableBytes { buffer throws(SystemError) in try Syscall.receive(fd, into: buffer) }
        } catch {
            throw ConnectionFailure.from(error)
        }
        switch result {
        case .done(let count): return count
        case .wouldBlock: throw .timeout
        }
    }
}
