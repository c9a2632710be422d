#if canImport(Glibc)
import Glibc
#endif
import CSystem
import HearthSystem
import Dispatch

/// The listening socket and its accept loop. Accepts in bounded batches (the source is
/// level-triggered: it fires again if more are waiting), spreads connections round-robin
/// over the I/O loops, refuses connections over the cap with a 503, and backs off when
/// the process is out of descriptors (docs/linux-notes.md pitfall 5).
///
/// `@unchecked Sendable`: mutable state (`source`, `suspended`, `stopped`, `nextLoop`) is
/// confined to `queue`.
final class Listener: @unchecked Sendable {
    /// Connections accepted per readiness event before yielding the queue.
    static let acceptBatch = 64
    /// Pause after EMFILE/ENFILE before accepting again.
    static let descriptorBackoff: Double = 0.1

    let fd: Int32
    let queue: DispatchQueue
    private let loops: [IOLoop]
    /// (fd, peer address, loop, the address counted in `addresses`, whether it is counted
    /// in `reserve` instead).
    private let makeConnection: @Sendable (Int32, String, IOLoop, String?, Bool) -> HTTPConnection
    private let counters: ServerCounters
    private let maxConnections: Int
    private let addresses: AddressCounts
    /// Connections an address past its cap may still open for health checks; nil: none.
    private let reserve: AddressCounts?
    private let trustedProxies: Set<String>
    private let log: @Sendable (String) -> Void
    private var source: DispatchSourceRead?
    private var suspended = false
    private var stopped = false
    private var nextLoop = 0

    init(fd: Int32, queue: DispatchQueue, loops: [IOLoop], counters: ServerCounters, maxConnections: Int,
         addresses: AddressCounts, reserve: AddressCounts?, trustedProxies: Set<String>,
         log: @escaping @Sendable (String) -> Void,
         makeConnection: @escaping @Sendable (Int32, String, IOLoop, String?, Bool) -> HTTPConnection) {
        self.reserve = reserve
        self.fd = fd
        self.queue = queue
        self.loops = loops
        self.counters = counters
        self.maxConnections = maxConnections
        self.addresses = addresses
        self.trustedProxies = trustedProxies
        self.log = log
        self.makeConnection = makeConnection
    }

    func start() {
        queue.async {
            let source = DispatchSource.makeReadSource(fileDescriptor: self.fd, queue: self.queue)
            source.setEventHandler { self.acceptReady() }
            source.setCancelHandler {
                do { try Syscall.close(self.fd) } catch { self.log("HTTP listener: \(error)") }
                self.source = nil
            }
            self.source = source
            if self.stopped {
                source.activate()
                source.cancel()
            } else {
                source.activate()
            }
        }
    }

    /// Stops accepting. Synchronous, so a caller knows new connections are refused when it
    /// returns: `shutdown(2)` on a listening socket makes Linux refuse further connects at
    /// once; the fd itself is closed in the source's cancel handler.
    func stop() {
        queue.sync {
            if stopped { return }
            stopped = true
            try? Syscall.shutdown(fd, Int32(SHUT_RDWR))
            guard let source else { return }
            if suspended {
                suspended = false
                source.resume()
            }
            source.cancel()
        }
    }

    private func acceptReady() {
        if stopped { return }
        for _ in 0..<Self.acceptBatch {
            var peer = sockaddr_storage()
            let result: IOResult<Int32>
            do {
                result = try Syscall.accept(fd, peer: &peer)
            } catch {
                switch error.errno {
                case ECONNABORTED, EPROTO:
                    continue  // the peer gave up while queued; take the next one
                case EMFILE, ENFILE, ENOBUFS, ENOMEM:
                    log("HTTP listener: \(error); pausing accept")
                    backOff()
                default:
                    log("HTTP listener: \(error)")
                }
                return
            }
            guard case .done(let connection) = result else { return }
            // Each response and push goes out when written: without this, Nagle holds a
            // small write (a wire `ok` after a 75 KB `rm`) until the peer ACKs the last
            // segment, which a delayed ACK puts off by up to 40 ms. Best effort.
            try? Syscall.setOption(connection, level: Int32(IPPROTO_TCP), name: Int32(TCP_NODELAY), value: 1)
            admit(connection, peer: &peer)
        }
    }

    private func admit(_ connection: Int32, peer: inout sockaddr_storage) {
        counters.accepted.wrappingAdd(1, ordering: .relaxed)
        if counters.open.load(ordering: .relaxed) >= maxConnections {
            counters.rejected.wrappingAdd(1, ordering: .relaxed)
            refuse(connection, status: 503)
            return
        }
        let address = Self.format(&peer)
        // A trusted proxy's connections are counted per forwarded client, on their requests.
        var counted = trustedProxies.contains(address) ? nil : address
        var onReserve = false
        if let address = counted, !addresses.acquire(address) {
            // Past the address's cap: a few more connections are read for health checks
            // (the connection serves only `uncappedPaths`), then 429 at once.
            guard let reserve, reserve.acquire(address) else {
                counters.addressRefusals.wrappingAdd(1, ordering: .relaxed)
                refuse(connection, status: 429)
                return
            }
            (counted, onReserve) = (nil, true)
        }
        counters.open.wrappingAdd(1, ordering: .relaxed)
        let loop = loops[nextLoop]
        nextLoop = (nextLoop + 1) % loops.count
        let conn = makeConnection(connection, address, loop, counted, onReserve)
        loop.queue.async { loop.register(conn) }
    }

    /// Over `maxConnections` (503) or `maxConnectionsPerAddress` (429): answer at once and
    /// close (best effort, never blocks; a fresh socket's send buffer always takes this
    /// small response).
    private func refuse(_ connection: Int32, status: Int) {
        var response: [UInt8] = []
        HTTPResponseSerializer.serialize(
            HTTPResponseSerializer.errorResponse(status: status), isHead: false, keepAlive: false, minorVersion: 1,
            into: &response)
        _ = try? response.withUnsafeBytes { bytes throws(SystemError) in try Syscall.send(connection, bytes) }
        try? Syscall.shutdown(connection, Int32(SHUT_WR))
        // Drain what already arrived so close() does not turn into a reset that could
        // destroy the 503 before the client reads it.
        var scratch = [UInt8](repeating: 0, count: 4096)
        for _ in 0..<4 {
            let read = try? scratch.withUnsafeMutableBytes { bytes throws(SystemError) in
                try Syscall.receive(connection, into: bytes)
            }
            guard case .done(let count)? = read, count > 0 else { break }
        }
        do { try Syscall.close(connection) } catch { log("HTTP listener: \(error)") }
    }

    private func backOff() {
        guard let source, !suspended else { return }
        suspended = true
        source.suspend()
        queue.asyncAfter(deadline: .now() + Self.descriptorBackoff) {
            guard self.suspended, !self.stopped, let source = self.source else { return }
            self.suspended = false
            source.resume()
        }
    }

    static func format(_ address: inout sockaddr_storage) -> String {
        var text = [CChar](repeating: 0, count: 64)
        guard hearth_sockaddr_format(&address, &text, text.count) == 0 else { return "" }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
