import Dispatch
import Synchronization

/// One serial I/O queue (one per core, LINUX-SWIFT-NOTES pitfall 4) and the connections
/// that live on it. Nothing on this queue blocks: handlers hand blocking work elsewhere.
///
/// Work for the open streams of this loop's connections comes from other threads (the
/// stream hub's fan-out, handlers answering on their own threads) through `post`, its
/// mailbox: posted work runs in order, in batches, and what a batch queues on a stream is
/// written at the batch's end, one send per connection (`deferringWrites`). When the loop
/// falls behind, the pushes waiting for one connection therefore leave in one syscall
/// instead of one each, so a backlog costs less per push the longer it is and drains
/// rather than grows (issue 30).
///
/// `@unchecked Sendable`: every mutable property is touched only on `queue` (the
/// connections, the timer, the shutdown flag, the read buffer's contents, the deferred
/// writes) except the mailbox, which is a `Mutex`; `queue`, `readBuffer`'s address and
/// `key` are immutable.
final class IOLoop: @unchecked Sendable {
    let queue: DispatchQueue
    /// Scratch space every connection of this loop reads into before feeding its parser:
    /// one 64 KiB buffer per loop instead of one per connection keeps idle connections small.
    let readBuffer: UnsafeMutableRawBufferPointer
    private let key = DispatchSpecificKey<Bool>()
    private var connections: [ObjectIdentifier: HTTPConnection] = [:]
    private var timer: DispatchSourceTimer?
    private(set) var shuttingDown = false
    private let mailbox = Mutex(Mailbox())
    /// Connections that queued stream output during the running batch (`deferWrite`).
    private var deferred: [HTTPConnection] = []
    /// True while a batch of several posted blocks runs: stream output is queued, and
    /// written once per connection at the batch's end.
    private(set) var deferringWrites = false

    private struct Mailbox {
        var work: [@Sendable () -> Void] = []
        var scheduled = false
    }

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

    /// Runs `work` on this loop, after everything posted before it (from any thread).
    func post(_ work: @escaping @Sendable () -> Void) {
        let schedule = mailbox.withLock { box in
            box.work.append(work)
            if box.scheduled { return false }
            box.scheduled = true
            return true
        }
        if schedule { queue.async { self.runPosted() } }
    }

    /// Runs all the work posted so far as one batch, then writes what it queued.
    private func runPosted() {
        let batch = mailbox.withLock { box in
            box.scheduled = false
            let work = box.work
            box.work = []
            return work
        }
        // One block (no backlog: a push, an answer) writes as it goes, as without the
        // mailbox: gathering then writing would walk its connections twice. Several blocks
        // mean the loop fell behind: their output is gathered and written once.
        deferringWrites = batch.count > 1
        for work in batch { work() }
        deferringWrites = false
        let writers = deferred
        deferred = []
        for connection in writers { connection.writeDeferred() }
    }

    /// `connection` queued stream output during the running batch: written at its end.
    func deferWrite(_ connection: HTTPConnection) {
        deferred.append(connection)
    }

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
