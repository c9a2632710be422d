import Dispatch

/// One serial I/O queue (one per core, LINUX-SWIFT-NOTES pitfall 4) and the connections
/// that live on it. Nothing on this queue blocks: handlers hand blocking work elsewhere.
///
/// `@unchecked Sendable`: every mutable property is touched only on `queue` (the
/// connections, the timer, the shutdown flag, the read buffer's contents); `queue`,
/// `readBuffer`'s address and `key` are immutable.
final class IOLoop: @unchecked Sendable {
    let queue: DispatchQueue
    /// Scratch space every connection of this loop reads into before feeding its parser:
    /// one 64 KiB buffer per loop instead of one per connection keeps idle connections small.
    let readBuffer: UnsafeMutableRawBufferPointer
    private let key = DispatchSpecificKey<Bool>()
    private var connections: [ObjectIdentifier: HTTPConnection] = [:]
    private var timer: DispatchSourceTimer?
    private(set) var shuttingDown = false

    init(label: String) {
        queue = DispatchQueue(label: label)
        readBuffer = .allocate(byteCount: 64 * 1024, alignment: 16)
        queue.setSpecific(key: key, value: true)
    }

    deinit {
        readBuffer.deallocate()
    }

    /// True when running on this loop's queue: a handler that answers synchronously is
    /// served without a queue hop.
    var isCurrent: Bool { DispatchQueue.getSpecific(key: key) == true }

    var connectionCount: Int { connections.count }

    /// Starts the timeout sweep: every `interval`, each connection checks its lifecycle.
    /// One timer per loop rather than one per connection keeps 10,000 idle connections cheap.
    func startTimer(interval: Double, clock: @escaping @Sendable () -> Nanoseconds) {
        queue.async {
            let timer = DispatchSource.makeTimerSource(queue: self.queue)
            let nanos = Int(interval * 1e9)
            timer.schedule(deadline: .now() + .nanoseconds(nanos), repeating: .nanoseconds(nanos),
                           leeway: .nanoseconds(nanos / 10))
            timer.setEventHandler { [unowned self] in
                let now = clock()
                for connection in Array(self.connections.values) {
                    connection.checkTimeouts(now: now)
                }
            }
            self.timer = timer
            timer.activate()
        }
    }

    func register(_ connection: HTTPConnection) {
        connections[ObjectIdentifier(connection)] = connection
        connection.start()
        if shuttingDown { connection.beginShutdown() }
    }

    func unregister(_ connection: HTTPConnection) {
        connections[ObjectIdentifier(connection)] = nil
    }

    /// Graceful shutdown: idle connections close now, busy ones after their response.
    func beginShutdown() {
        shuttingDown = true
        for connection in Array(connections.values) {
            connection.beginShutdown()
        }
    }

    /// End of the grace period: close whatever is left.
    func forceCloseAll() {
        for connection in Array(connections.values) {
            connection.close()
        }
    }

    /// After the last connection closed: stop the sweep (the timer's handler holds `self`
    /// unowned, so no cycle remains).
    func stop() {
        timer?.cancel()
        timer = nil
    }
}
