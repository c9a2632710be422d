import Dispatch
import Synchronization
import HearthSystem

/// An HTTP/1.1 server on POSIX sockets and Dispatch (docs/design.md §3): one accept queue,
/// a few serial I/O queues (one per core by default), one read source per connection.
///
/// Call `shutdown` before releasing a started server: its queues and sources keep it alive
/// until then.
public final class HTTPServer: Sendable {
    public let configuration: HTTPServerConfiguration
    private let handler: any HTTPHandler
    private let log: @Sendable (String) -> Void
    private let clock: @Sendable () -> Nanoseconds
    let counters: ServerCounters
    /// Open connections per client address (`HTTPLimits.maxConnectionsPerAddress`).
    let addresses: AddressCounts
    /// Bytes held for incomplete requests and messages (`HTTPLimits.maxIncompleteBytes`).
    let incomplete: IncompleteBytes
    /// Connections past their address's cap, for health checks only.
    let reserve = AddressCounts(limit: HTTPLimits.uncappedConnectionsPerAddress)
    /// The I/O loops, one per `ioQueueCount` (read by tests).
    let loops: [IOLoop]
    private let acceptQueue = DispatchQueue(label: "hearth.http.accept")
    private let state = Mutex<State>(.idle)

    private enum State {
        case idle
        case running(Listener)
        case draining([@Sendable () -> Void])
        case stopped
    }

    public convenience init(
        configuration: HTTPServerConfiguration, handler: any HTTPHandler,
        log: @escaping @Sendable (String) -> Void = { _ in }
    ) {
        self.init(configuration: configuration, handler: handler, log: log,
                  clock: { DispatchTime.now().uptimeNanoseconds })
    }

    /// With an injected monotonic clock (nanoseconds) and maker of send rings, for tests.
    init(configuration: HTTPServerConfiguration, handler: any HTTPHandler,
         log: @escaping @Sendable (String) -> Void, clock: @escaping @Sendable () -> Nanoseconds,
         makeRing: () throws(SystemError) -> SendRing = { () throws(SystemError) in try SendRing() }) {
        self.configuration = configuration
        self.handler = handler
        self.log = log
        self.clock = clock
        self.counters = ServerCounters(unsent: configuration.unsentBytes ?? UnsentBytes(limit: configuration.limits.maxUnsentBytes))
        self.addresses = AddressCounts(limit: configuration.limits.maxConnectionsPerAddress)
        self.incomplete = IncompleteBytes(
            limit: configuration.limits.maxIncompleteBytes, perAddress: configuration.limits.maxIncompleteBytesPerAddress)
        self.loops = (0..<max(1, configuration.ioQueueCount)).map {
            IOLoop(label: "hearth.http.io.\($0)", batchedSends: configuration.batchedSends, makeRing: makeRing)
        }
        self.sendRingError = loops.lazy.compactMap(\.ringSetupError).first
        self.loopsWithRings = loops.count(where: { $0.ringSetupError == nil && configuration.batchedSends })
    }

    /// How many of the I/O loops got a ring (the others send one `send()` per connection).
    public let loopsWithRings: Int
    /// How many I/O loops serve connections.
    public var loopCount: Int { loops.count }

    /// Why a fan-out's sends go one `send()` per connection on some or all loops although
    /// `batchedSends` asked for io_uring (the kernel refused a ring: `ENOSYS`; `EPERM` from
    /// `kernel.io_uring_disabled` or a container's seccomp filter; `ENOMEM`); nil when
    /// they go through rings on every loop, or were not asked to.
    public let sendRingError: SystemError?

    /// Sends one ring holds: a loop's fan-out makes one system call per this many connections.
    public static let sendRingCapacity = Int(SendRing.defaultCapacity)

    /// Whether a fan-out's sends go through io_uring rings on every loop.
    public var sendsThroughRings: Bool { configuration.batchedSends && sendRingError == nil }

    /// Raises the process's open-descriptor limit to its hard limit and returns it, so the
    /// caller can warn when `maxConnections` does not fit.
    public static func raiseOpenFileLimit() -> Int? {
        try? Syscall.raiseOpenFileLimit()
    }

    /// A random prefix for the request ids this server makes (`<prefix>-<counter>`), so ids
    /// from two runs or two servers do not collide.
    static func requestIDPrefix() -> String {
        let value = UInt32.random(in: 0...UInt32.max)  // the system generator
        let hex = String(value, radix: 16)
        return String(repeating: "0", count: 8 - hex.count) + hex
    }

    /// Counters for metrics; cheap, never waits on an I/O queue.
    public var stats: HTTPServerStats { counters.snapshot(incompleteBytes: incomplete.total.load(ordering: .relaxed)) }

    /// Binds, listens and starts accepting (on `socket` if given: bound earlier, its
    /// address wins over the configuration's). Returns the bound port (useful with port 0).
    /// Ignores `SIGPIPE` process-wide (writes report `EPIPE` instead).
    public func start(on socket: BoundSocket? = nil) throws -> Int {
        try state.withLock { state in
            guard case .idle = state else { throw HTTPServerError.alreadyStarted }
            Syscall.ignoreSIGPIPE()
            let (fd, port): (Int32, Int)
            if let socket {
                guard let taken = socket.take() else { throw HTTPServerError.alreadyStarted }
                (fd, port) = (taken, socket.port)
            } else {
                (fd, port) = try ListeningSocket.open(host: configuration.host, port: configuration.port)
            }
            let context = HTTPConnection.Context(
                handler: handler, limits: configuration.limits, counters: counters, clock: clock, log: log,
                trustedProxies: configuration.trustedProxies, accessLog: configuration.accessLog,
                largeStreamUnit: configuration.largeStreamUnit,
                requestIDPrefix: Self.requestIDPrefix(), addresses: addresses, incomplete: incomplete,
                reserve: reserve, uncappedPaths: configuration.uncappedPaths,
                onClose: { [weak self] in self?.connectionClosed() })
            let listener = Listener(
                fd: fd, queue: acceptQueue, loops: loops, counters: counters,
                maxConnections: configuration.limits.maxConnections, addresses: addresses,
                reserve: configuration.uncappedPaths.isEmpty ? nil : reserve,
                trustedProxies: configuration.trustedProxies, log: log
            ) { fd, address, loop, counted, onReserve in
                HTTPConnection(fd: fd, remoteAddress: address, loop: loop, context: context, countedAddress: counted,
                               onReserve: onReserve)
            }
            for loop in loops { try loop.startPolling() }
            let tick = Self.sweepInterval(configuration.limits)
            for loop in loops { loop.startTimer(interval: tick, clock: clock) }
            listener.start()
            state = .running(listener)
            return port
        }
    }

    /// Graceful shutdown (docs/design.md §7): stop accepting (new connects are refused when
    /// this returns), close idle keep-alive connections, let requests in flight be answered
    /// and written (their responses carry `Connection: close`), then close everything. At
    /// the end of `gracePeriod` seconds whatever is left is closed. `completion` runs
    /// exactly once, after every connection is closed.
    public func shutdown(gracePeriod: Double, completion: @escaping @Sendable () -> Void) {
        enum Step { case begin(Listener), wait, finish }
        let step: Step = state.withLock { state in
            switch state {
            case .idle, .stopped:
                state = .stopped
                return .finish
            case .running(let listener):
                state = .draining([completion])
                return .begin(listener)
            case .draining(let completions):
                state = .draining(completions + [completion])
                return .wait
            }
        }
        switch step {
        case .finish:
            completion()
        case .wait:
            return
        case .begin(let listener):
            listener.stop()
            for loop in loops {
                loop.queue.async { loop.beginShutdown() }
            }
            let loops = self.loops
            acceptQueue.asyncAfter(deadline: .now() + max(0, gracePeriod)) {
                for loop in loops {
                    loop.queue.async { loop.forceCloseAll() }
                }
            }
            finishIfDrained()
        }
    }

    /// `shutdown(gracePeriod:completion:)`, awaited.
    public func shutdown(gracePeriod: Double) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            shutdown(gracePeriod: gracePeriod) { continuation.resume() }
        }
    }

    private func connectionClosed() {
        let (_, remaining) = counters.open.wrappingSubtract(1, ordering: .sequentiallyConsistent)
        if remaining == 0 { finishIfDrained() }
    }

    /// Runs the completions once, when draining and no connection is left.
    private func finishIfDrained() {
        let completions: [@Sendable () -> Void]? = state.withLock { state in
            guard case .draining(let completions) = state,
                  counters.open.load(ordering: .sequentiallyConsistent) == 0 else { return nil }
            state = .stopped
            return completions
        }
        guard let completions else { return }
        // Complete only after every loop has run past the last cancel handler, so the
        // connections are released too, not just their descriptors closed.
        let group = DispatchGroup()
        for loop in loops {
            loop.queue.async(group: group) { loop.stop() }
        }
        group.notify(queue: acceptQueue) {
            for completion in completions { completion() }
        }
    }

    /// How often each loop checks its connections' deadlines: a quarter of the shortest
    /// timeout, between 5 ms and 500 ms, so a timeout fires at most 25% late.
    static func sweepInterval(_ limits: HTTPLimits) -> Double {
        let shortest = [limits.headerReadTimeout, limits.bodyReadTimeout, limits.writeTimeout, limits.idleTimeout,
                        HTTPLimits.lingerTimeout].filter { $0 > 0 }.min() ?? 1
        return min(max(shortest / 4, 0.005), 0.5)
    }
}
