#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import HearthSystem
import Synchronization

/// One serial I/O queue (one per core, docs/linux-notes.md pitfall 4) and the connections
/// that live on it. Nothing on this queue blocks: handlers hand blocking work elsewhere.
///
/// Work for the open streams of this loop's connections comes from other threads (the
/// stream hub's fan-out, handlers answering on their own threads) through `post`, its
/// mailbox: posted work runs in order, in batches, and what a batch queues on a stream is
/// written at the batch's end, one send per connection (`deferringWrites`). When the loop
/// falls behind, the pushes waiting for one connection therefore leave in one syscall
/// instead of one each, so a backlog costs less per push the longer it is and drains
/// rather than grows.
///
/// Answers to requests have a lane of their own in the mailbox (`postAnswer`): they run
/// before the ordinary work waiting there, between the blocks of a batch, and inside a long
/// fan-out block every `answerCheckInterval` connections (`forEach(_:yieldingToAnswers:)`).
/// A write's acknowledgement then waits for at most one slice of the fan-out of the writes
/// before it, not for all of it: at 10,000 listeners a block holds tens of milliseconds of
/// sends. Only answers that no posted work must precede go there: a REST exchange's
/// answer (its connection is in no fan-out group: a stream or WebSocket connection has no
/// exchange any more). A wire-protocol answer, which must follow its client's pushes, goes
/// the ordinary way. The lane cannot starve the fan-out: an exchange has one request in
/// flight at a time, so a look finds at most one answer per connection of the loop, and
/// the walk goes on after it.
///
/// Readiness comes from the loop's own epoll instance (`Poller`), not from a Dispatch
/// source per connection: a thread per loop waits in `epoll_wait` and runs each wait's
/// ready connections on `queue` in one block, on its own thread (`queue.sync`: Dispatch
/// runs a sync block on the caller's thread once the queue is free, so no worker is woken
/// for it). A connection is watched one-shot and armed
/// again by its handler, with what it wants then (`HTTPConnection.arm`). Dispatch's read
/// sources re-armed themselves through its manager thread after every event, a write to
/// the manager's eventfd and a wake-up of that thread, which preempted the I/O thread
/// (a fifth of the server's context switches on creates, ~6 % of its CPU).
///
/// A fan-out walk (`forEach(_:sending:_:)`) hands its sends to the kernel through the loop's
/// `SendRing` (io_uring) where the kernel allows it: the sends of up to a ring's worth of
/// connections go in one system call, and each connection's result is handled as a
/// `send()`'s would be (what the socket did not take is queued and written when it drains;
/// a failed send closes the connection). The output a batch gathered when the loop fell
/// behind goes through the ring too, at the batch's end (`sendThroughRing`). Without a ring,
/// each connection gets its own `send()`.
///
/// `@unchecked Sendable`: every mutable property is touched only on `queue` (the
/// connections, the timer, the shutdown flag, the read buffer's contents, the deferred
/// writes, the send ring and its walk) except the mailbox, which is a `Mutex`; `queue`,
/// `readBuffer`'s address, `poller`, `key` and `ringSetupError` are immutable.
final class IOLoop: @unchecked Sendable {
    let queue: DispatchQueue
    /// Scratch space every connection of this loop reads into before feeding its parser:
    /// one 64 KiB buffer per loop instead of one per connection keeps idle connections small.
    let readBuffer: UnsafeMutableRawBufferPointer
    private let key = DispatchSpecificKey<Bool>()
    private var connections: [UInt64: HTTPConnection] = [:]
    private var nextToken: UInt64 = 1
    /// The epoll instance the loop's connections are watched in, and its thread.
    let poller: Poller
    private var timer: DispatchSourceTimer?
    private(set) var shuttingDown = false
    private let mailbox = Mutex(Mailbox())
    /// Connections that queued stream output during the running batch (`deferWrite`).
    private var deferred: [HTTPConnection] = []
    /// True while a batch of several posted blocks runs: stream output is queued, and
    /// written once per connection at the batch's end.
    private(set) var deferringWrites = false
    /// Whether the answers lane holds work (read without the mailbox's lock between the
    /// parts of a long block; set and cleared under it).
    private let answersWaiting = Atomic<Bool>(false)
    /// True while answers run: an answer that walks many connections does not run the
    /// answers posted meanwhile inside itself; they run after it.
    private var answering = false
    /// The ring a fan-out walk's sends go through (nil: one `send()` each). This and the
    /// walk's state below are used by IOLoop+SendRing.swift, on `queue` only.
    var ring: SendRing?
    /// Why the loop has no ring, when one was wanted (io_uring refused), for the start-up log.
    let ringSetupError: SystemError?
    /// The bytes of the walk running now, which every send in the ring points to.
    var walkBytes: UnsafeRawBufferPointer?
    /// The connections whose sends are in the ring, by tag.
    var ringSenders: [HTTPConnection] = []
    /// The connections of the last flush whose results are being handled.
    var finishing: [HTTPConnection] = []
    /// Where gathered output is copied for the ring (`sendThroughRing`), made at first use.
    var ringArena: UnsafeMutableRawBufferPointer?

    /// How many items a long block on the loop (a fan-out to this loop's listeners of one
    /// location) handles between two looks at the answers lane (`forEach(_:yieldingToAnswers:)`):
    /// 256 pushes are about 2 ms of server work at the 8-9 µs a push measures on a 2-core
    /// machine (BENCHMARKS.md), the longest an answer waits behind a fan-out; the look
    /// itself is one atomic load.
    static let answerCheckInterval = 256

    private struct Mailbox {
        var work: [@Sendable () -> Void] = []
        /// Answers to requests (`postAnswer`): run before `work`.
        var answers: [@Sendable () -> Void] = []
        var scheduled = false
    }

    /// `batchedSends`: a fan-out's sends go through the ring `makeRing` gives, when the
    /// kernel allows one.
    init(label: String, batchedSends: Bool = false,
         makeRing: () throws(SystemError) -> SendRing = { () throws(SystemError) in try SendRing() }) {
        queue = DispatchQueue(label: label)
        if batchedSends {
            do throws(SystemError) {
                (ring, ringSetupError) = (try makeRing(), nil)
            } catch {
                (ring, ringSetupError) = (nil, error)
            }
        } else {
            (ring, ringSetupError) = (nil, nil)
        }
        readBuffer = .allocate(byteCount: 64 * 1024, alignment: 16)
        poller = Poller()
        queue.setSpecific(key: key, value: true)
    }

    deinit {
        poller.stop()
        readBuffer.deallocate()
        ringArena?.deallocate()
    }

    /// Starts the thread that waits for readiness (once, before the first connection).
    /// It runs each wait's block itself, in order with what was posted before it, and
    /// waits for the next readiness only after: handing the block to the queue
    /// (`queue.async`) woke a Dispatch worker for every wait: 0.7–0.9 more context switches
    /// per create (docs/bench/history.md, "the poller runs its own block"). Nothing on the
    /// loop waits for the poller thread, so the sync cannot deadlock; its stack is the
    /// process's default thread stack, as a Dispatch worker's is.
    func startPolling() throws(SystemError) {
        try poller.start { [weak self] ready in
            guard let self else { return }
            self.queue.sync { self.run(ready) }
        }
    }

    /// One wait's ready connections (on `queue`): each handles its events and arms again.
    private func run(_ ready: [(token: UInt64, events: UInt32)]) {
        for (token, events) in ready {
            connections[token]?.ready(events)
        }
    }

    /// True when running on this loop's queue: a handler that answers synchronously is
    /// served without a queue hop.
    var isCurrent: Bool { DispatchQueue.getSpecific(key: key) == true }

    var connectionCount: Int { connections.count }

    /// Runs `work` on this loop, after everything posted before it (from any thread).
    func post(_ work: @escaping @Sendable () -> Void) {
        enqueue(work, asAnswer: false)
    }

    /// Runs `answer` on this loop before the ordinary work posted and not yet started, and
    /// during a long block between its parts (see the type's comment). For work that nothing
    /// posted earlier must precede on the connections it touches.
    func postAnswer(_ answer: @escaping @Sendable () -> Void) {
        enqueue(answer, asAnswer: true)
    }

    /// Puts `work` in its lane and schedules a batch unless one is scheduled already.
    private func enqueue(_ work: @escaping @Sendable () -> Void, asAnswer: Bool) {
        let schedule = mailbox.withLock { box in
            if asAnswer {
                box.answers.append(work)
                answersWaiting.store(true, ordering: .relaxed)
            } else {
                box.work.append(work)
            }
            if box.scheduled { return false }
            box.scheduled = true
            return true
        }
        if schedule { queue.async { self.runPosted() } }
    }

    /// Runs all the work posted so far as one batch, the answers first, then writes what
    /// it queued.
    private func runPosted() {
        let (answers, batch) = mailbox.withLock { box in
            box.scheduled = false
            answersWaiting.store(false, ordering: .relaxed)
            defer { (box.answers, box.work) = ([], []) }
            return (box.answers, box.work)
        }
        run(answers)
        // One block (no backlog: a push, an answer) writes as it goes, as without the
        // mailbox: gathering then writing would walk its connections twice. Several blocks
        // mean the loop fell behind: their output is gathered and written once.
        deferringWrites = batch.count > 1
        for work in batch {
            work()
            runAnswers()
        }
        deferringWrites = false
        let writers = deferred
        deferred = []
        sendThroughRing(writers)
        for connection in writers { connection.writeDeferred() }
    }

    /// Runs the answers posted since the loop last looked, unless answers are running
    /// already (on `queue`).
    func runAnswers() {
        guard !answering, answersWaiting.load(ordering: .relaxed) else { return }
        let answers = mailbox.withLock { box in
            answersWaiting.store(false, ordering: .relaxed)
            defer { box.answers = [] }
            return box.answers
        }
        run(answers)
    }

    private func run(_ answers: [@Sendable () -> Void]) {
        if answers.isEmpty { return }
        answering = true
        for answer in answers { answer() }
        answering = false
    }

    /// `body` for each of `items` in order (on `queue`), running the answers posted
    /// meanwhile after every `answerCheckInterval` items: a long walk holds an answer back
    /// for one slice of itself at most.
    func forEach<Items: Sequence>(_ items: Items, yieldingToAnswers body: (Items.Element) -> Void) {
        var sinceLook = 0
        for item in items {
            body(item)
            sinceLook += 1
            if sinceLook == Self.answerCheckInterval {
                sinceLook = 0
                flushRing()
                runAnswers()
            }
        }
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
        let token = nextToken
        nextToken += 1
        connections[token] = connection
        connection.start(token: token)
        if shuttingDown { connection.beginShutdown() }
    }

    func unregister(_ connection: HTTPConnection) {
        connections[connection.token] = nil
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
    /// unowned, so no cycle remains) and the thread waiting for readiness.
    func stop() {
        timer?.cancel()
        timer = nil
        poller.stop()
    }

    /// The loop's epoll instance and the thread waiting on it. `@unchecked Sendable`:
    /// `epoll_ctl` (`watch`, `arm`, `forget`) may be called from any thread; the event
    /// buffer is touched only by the waiting thread; `stopped` is atomic.
    final class Poller: @unchecked Sendable {
        /// Events taken per `epoll_wait`.
        static let eventsPerWait = 256
        private static let wakeToken: UInt64 = 0
        private let poll: EventPoll?
        private let waker: EventWaker?
        /// Why the epoll instance or its waker could not be made (`start` throws it).
        private let setupError: SystemError?
        private let stopped = Atomic<Bool>(false)
        /// The waiting thread's `pthread_self()`, once it runs (0 before): tests check that
        /// a wait's block runs on it.
        let threadID = Atomic<UInt>(0)

        init() {
            do throws(SystemError) {
                let poll = try EventPoll(capacity: Self.eventsPerWait)
                let waker = try EventWaker()
                try poll.add(waker.descriptor, events: EventPoll.readable, token: Self.wakeToken)
                (self.poll, self.waker, setupError) = (poll, waker, nil)
            } catch {
                (poll, waker, setupError) = (nil, nil, error)
            }
        }

        /// Starts the waiting thread: `deliver` gets each wait's (token, events) pairs.
        func start(_ deliver: @escaping @Sendable ([(token: UInt64, events: UInt32)]) -> Void) throws(SystemError) {
            guard poll != nil, waker != nil else { throw setupError ?? SystemError(errno: EBADF, call: "epoll_create1") }
            Syscall.detachThread(try Syscall.spawnThread { [self] in waitLoop(deliver) })
        }

        /// The waiting thread's loop, until `stop`.
        private func waitLoop(_ deliver: @Sendable ([(token: UInt64, events: UInt32)]) -> Void) {
            guard let poll, let waker else { return }
            threadID.store(UInt(pthread_self()), ordering: .releasing)
            while !stopped.load(ordering: .acquiring) {
                let count: Int
                do {
                    count = try poll.wait(timeoutMilliseconds: -1)
                } catch {
                    return  // not EINTR (retried): a bug such as EBADF, nothing left to wait on
                }
                var ready: [(token: UInt64, events: UInt32)] = []
                ready.reserveCapacity(count)
                for index in 0..<count {
                    let event = poll.event(at: index)
                    if event.token == Self.wakeToken {
                        waker.drain()
                    } else {
                        ready.append(event)
                    }
                }
                if !ready.isEmpty { deliver(ready) }
            }
        }

        /// Watches `fd` one-shot for `events` under `token`.
        func watch(_ fd: Int32, events: UInt32, token: UInt64) throws(SystemError) {
            guard let poll else { throw setupError ?? SystemError(errno: EBADF, call: "epoll_ctl") }
            try poll.add(fd, events: events | EventPoll.oneShot, token: token)
        }

        /// Arms `fd` again for `events` (one-shot).
        func arm(_ fd: Int32, events: UInt32, token: UInt64) throws(SystemError) {
            guard let poll else { throw setupError ?? SystemError(errno: EBADF, call: "epoll_ctl") }
            try poll.modify(fd, events: events | EventPoll.oneShot, token: token)
        }

        /// Stops watching `fd` (before it is closed).
        func forget(_ fd: Int32) {
            try? poll?.remove(fd)
        }

        /// Ends the waiting thread (its next wake-up).
        func stop() {
            stopped.store(true, ordering: .releasing)
            waker?.signal()
        }
    }
}
