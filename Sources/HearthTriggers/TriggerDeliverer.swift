import Dispatch
import Foundation
import HearthHTTPClient
import HearthStore
import Logging
import Synchronization

/// What an operator (and later `hearth triggers`, metrics, the console) sees of one trigger.
public struct TriggerStatus: Sendable, Equatable {
    public var name: String
    /// Events delivered (2xx) since this process started.
    public var delivered: Int
    /// Failed attempts since this process started.
    public var failedAttempts: Int
    /// Events moved to the dead letters since this process started.
    public var deadLettered: Int
    /// Of those, events moved because the trigger had `maxPendingPerTrigger` waiting.
    public var backlogOverflow: Int
    /// Pending events dropped undelivered because the trigger's pending events alone were
    /// past its byte budget (`TriggerLimits.defaultMaxStoredBytes`).
    public var budgetDropped: Int
    /// Dead letters deleted: past the byte budget (the oldest first) or older than
    /// `TriggerLimits.deadLetterRetentionSeconds`.
    public var deadRemoved: Int
    /// The last failure (no secrets: status code or connection error), nil after a success.
    public var lastError: String?
    /// When the last event was delivered, ms.
    var lastDeliveredAt: Int64?

    public init(name: String) {
        self.name = name
        (delivered, failedAttempts, deadLettered, backlogOverflow, budgetDropped, deadRemoved) = (0, 0, 0, 0, 0, 0)
    }
}

/// Delivers one trigger's events (docs/design.md §11): reads the outbox in id order (commit
/// order) and sends the head until it is delivered, retried or dead, on its own thread so
/// no writer waits. Woken by `wake()` (each commit) and by its own timers (the next
/// retry); otherwise it sleeps. On a shared engine it delivers only while it holds the
/// trigger's lease, renewed while delivering.
///
/// A second thread, the keeper, bounds what the trigger keeps in the outbox (its pending
/// count, its byte budget, the dead letters' retention), woken by the same commits, so a
/// receiver that hangs an attempt for its whole timeout never delays the bounds. Only the
/// node holding the lease runs it.
final class TriggerDeliverer: Sendable {
    struct Options: Sendable {
        var maxPending = TriggerLimits.maxPendingPerTrigger
        var maxEventAgeMilliseconds = TriggerLimits.maxEventAgeSeconds * 1000
        var backoffBase = TriggerLimits.backoffBaseMilliseconds
        var backoffCap = TriggerLimits.backoffCapMilliseconds
        var batchSize = TriggerLimits.batchSize
        var leaseSeconds = TriggerLimits.leaseSeconds
        /// The longest sleep with nothing to do (a safety net for a missed wake-up).
        /// Also how soon events resent by another process (`hearth triggers resend`) or
        /// committed by another node are seen.
        var idleMilliseconds = TriggerLimits.idlePollMilliseconds
        /// The loop guard whose marked events go to the dead letters unsent.
        var rateGuard: TriggerRateGuard? = nil
        /// The byte budget of a trigger whose definition sets none.
        var maxStoredBytes = TriggerLimits.defaultMaxStoredBytes
        /// How often the keeper checks the pending count and the byte budget, at most.
        var budgetCheckMilliseconds = TriggerLimits.budgetCheckMilliseconds
        var deadLetterRetentionMilliseconds = TriggerLimits.deadLetterRetentionSeconds * 1000
        var deadLetterPruneMilliseconds = TriggerLimits.deadLetterPruneMilliseconds
        var maxBufferedEvents = TriggerLimits.maxBufferedEvents
        var maxBufferedBytes = TriggerLimits.maxBufferedBytes
        var minPassMilliseconds = TriggerLimits.minPassMilliseconds
    }

    struct State {
        var definition: TriggerDefinition
        /// A wake-up is signalled and not yet taken: many commits wake a busy deliverer once.
        var woken = false
        /// The same for the keeper.
        var keeperWoken = false
        /// Events were committed since the loop last looked (its pass reads past its end again).
        var committed = false
        /// Events were resent: the loop starts a pass from the oldest.
        var rescan = false
        /// Attempts that ended, not yet recorded by the loop.
        var completions: [Completion] = []
        /// Whether this node holds the trigger's delivery lease (always, on a one-node
        /// engine): only the holder's keeper bounds the outbox, so nodes do not repeat it.
        var holdsLease = false
        var started = false
        var stopped = false
        var status: TriggerStatus
        /// Whether the trigger is stuck (its oldest pending event failing), as last logged.
        var stuck = StuckWatch()
    }

    /// How long `stop` waits for an attempt under way; past it the attempt is abandoned to
    /// its thread (its event stays pending and is sent again: at least once).
    static let stopWaitSeconds = 5

    // Internal, not private, where the delivery passes (TriggerDeliverer+Passes.swift) use them.
    let outbox: any TriggerOutbox
    let origin: EventOrigin
    let options: Options
    let clock: @Sendable () -> Int64
    let logger: Logger
    /// Hears the dead letters the retention deleted, per trigger.
    private let onPruned: @Sendable ([String: Int]) -> Void
    let state: Mutex<State>
    let wakeUp = DispatchSemaphore(value: 0)
    /// The receiver's connections kept open between attempts (closed when idle a second,
    /// and at stop).
    let connections = HTTPConnectionPool()
    /// The threads the attempts run on, kept between attempts.
    let attemptThreads = AttemptThreads()
    private let finished = DispatchSemaphore(value: 0)
    private let keeperWakeUp = DispatchSemaphore(value: 0)
    private let keeperFinished = DispatchSemaphore(value: 0)

    init(definition: TriggerDefinition, outbox: any TriggerOutbox, origin: EventOrigin, options: Options,
         clock: @escaping @Sendable () -> Int64, logger: Logger, onPruned: @escaping @Sendable ([String: Int]) -> Void) {
        (self.outbox, self.origin, self.options, self.clock, self.logger) = (outbox, origin, options, clock, logger)
        self.onPruned = onPruned
        state = Mutex(State(definition: definition, status: TriggerStatus(name: definition.name)))
    }

    func start() {
        let go = state.withLock { state in
            defer { state.started = true }
            return !state.started && !state.stopped
        }
        guard go else { return }
        Thread.detachNewThread { [self] in
            run()
            finished.signal()
        }
        Thread.detachNewThread { [self] in
            keep()
            keeperFinished.signal()
        }
    }

    var name: String { state.withLock { $0.definition.name } }
    var status: TriggerStatus { state.withLock { $0.status } }

    /// A reloaded definition (same name): used from the next attempt on.
    func update(_ definition: TriggerDefinition) {
        state.withLock { $0.definition = definition }
        wake()
    }

    func wake() {
        let (signal, signalKeeper) = state.withLock { state in
            defer { (state.woken, state.keeperWoken, state.committed) = (true, true, true) }
            return (!state.woken, !state.keeperWoken)
        }
        if signal { wakeUp.signal() }
        if signalKeeper { keeperWakeUp.signal() }
    }

    /// Events were moved back to pending (resent, with their old ids): the next pass starts
    /// from the oldest pending event at once.
    func rescan() {
        state.withLock { $0.rescan = true }
        wake()
    }

    /// Stops after the attempt under way, waiting for it at most `stopWaitSeconds`.
    func stop() {
        let running = state.withLock { state in
            defer { state.stopped = true }
            return state.started && !state.stopped
        }
        guard running else { return }
        wakeUp.signal()
        keeperWakeUp.signal()
        if finished.wait(timeout: .now() + .seconds(Self.stopWaitSeconds)) == .timedOut {
            logger.notice("trigger \(name): an attempt was still under way at stop; its event stays pending and is sent again")
        }
        _ = keeperFinished.wait(timeout: .now() + .seconds(Self.stopWaitSeconds))
    }

    var isStopped: Bool { state.withLock { $0.stopped } }

    /// The longest sleep (a safety net for a missed wake-up).
    static let maxSleepMilliseconds: Int64 = 60_000

    /// Sleeps until woken or `milliseconds` passed, at most `cap` (default: the idle poll,
    /// so events resent from another process are seen; waits that look at no events, for
    /// the lease or a store that is down, pass `Self.maxSleepMilliseconds`).
    private func sleep(_ milliseconds: Int64, cap: Int64? = nil) {
        let longest = cap ?? options.idleMilliseconds
        if wakeUp.wait(timeout: .now() + .milliseconds(Int(max(1, min(milliseconds, longest))))) == .success {
            state.withLock { $0.woken = false }
        }
    }

    /// One attempt's result, handed from its thread to the delivery loop.
    struct Completion: Sendable {
        var entry: LocationScheduler<OutboxRecord>.Entry
        /// nil: delivered (2xx); else why not.
        var failure: AttemptFailure?
        var at: Int64
    }

    /// The delivery loop: reads the backlog in id order into the scheduler, starts each
    /// event it picks on a thread of `attemptThreads` (at most `maxConcurrency` at once), and records
    /// the outcomes. Only this thread touches the outbox's delivery state.
    private func run() {
        var outboxFailures = 0
        var scheduler = LocationScheduler<OutboxRecord>(maxConcurrency: state.withLock { $0.definition.maxConcurrency },
                                                        capacity: options.maxBufferedEvents, capacityBytes: options.maxBufferedBytes)
        var done: [Int64] = []
        var leaseTakenAt: Int64? = nil
        defer {
            finish(&scheduler, &done)
            connections.closeAll()
            attemptThreads.close()
        }
        while !isStopped {
            let definition = state.withLock { $0.definition }
            // Every pass, whatever it does next (deliver, wait for the lease, back off
            // from a store that is down): kept connections idle too long are closed.
            connections.prune()
            do {
                try settle(&scheduler, &done, definition: definition)
                let now = clock()
                if leaseTakenAt.map({ now - $0 > Int64(options.leaseSeconds) * 333 }) ?? true {
                    guard try outbox.lease(trigger: definition.name, seconds: leaseSeconds(definition)) else {
                        leaseHeld(false)
                        leaseTakenAt = nil
                        scheduler.dropQueue()
                        connections.closeAll()  // another node delivers: none is needed here
                        // Another node delivers; ask again later (sooner while attempts end here).
                        sleep(Int64(options.leaseSeconds) * 500, cap: scheduler.inFlight.isEmpty ? Self.maxSleepMilliseconds : nil)
                        continue
                    }
                    leaseHeld(true)
                    leaseTakenAt = now
                }
                scheduler.configure(maxConcurrency: definition.maxConcurrency, now: now)
                if state.withLock({ state in defer { state.committed = false }; return state.committed }) { scheduler.committed() }
                let rescan = state.withLock { state in defer { state.rescan = false }; return state.rescan }
                if rescan || nextSweep(scheduler).map({ $0 <= now }) == true { scheduler.restart(now: now) }
                try read(into: &scheduler, trigger: definition.name, now: now)
                outboxFailures = 0
                try start(&scheduler, &done, definition: definition)
                sleep(wait(scheduler, now: clock()))
            } catch {
                // The store is unavailable: nothing is lost (the events stay pending).
                outboxFailures += 1
                if outboxFailures == 1 { logger.error("trigger \(definition.name): cannot read or update its outbox: \(error)") }
                sleep(backoff(attempt: outboxFailures), cap: Self.maxSleepMilliseconds)
            }
        }
    }

    /// Records whether this node holds the lease; the keeper starts at once when it is taken.
    private func leaseHeld(_ held: Bool) {
        let taken = state.withLock { state in
            defer { state.holdsLease = held }
            return held && !state.holdsLease
        }
        if taken { wake() }
    }

    /// The lease outlasts any attempt started while it is held: it is renewed every third
    /// of `leaseSeconds`, and an attempt started just before a renewal is due ends within
    /// its timeout after it.
    func leaseSeconds(_ definition: TriggerDefinition) -> Int {
        max(options.leaseSeconds, definition.timeoutSeconds + 5 + options.leaseSeconds / 3 + 1)
    }

    /// One attempt: nil on a 2xx answer, else how it failed (no secrets: a status or a
    /// connection error), classified by the client's typed error.
    func attempt(_ request: HTTPClientRequest, timeoutSeconds: Int) -> AttemptFailure? {
        let client = HTTPClient(timeoutSeconds: timeoutSeconds, maxResponseBytes: TriggerLimits.maxResponseBytes, pool: connections)
        do {
            let response = try client.send(request)
            return response.isSuccess ? nil : AttemptFailure(status: response.status)
        } catch {
            return AttemptFailure(error)
        }
    }

    /// After a failed attempt of `record`: records it and returns when the next is due.
    /// One that reached no function is retried at the short fixed interval and not counted
    /// (the backoff does not grow while a receiver is down); one the function answered, or
    /// that timed out, is counted and backs off exponentially.
    func retry(_ record: OutboxRecord, after failure: AttemptFailure, definition: TriggerDefinition) throws -> Int64 {
        let delay = failure.retryDelay(attempts: record.attempts, base: options.backoffBase, cap: options.backoffCap)
        if record.attempts == 0 && record.lastError == nil {
            logger.warning("trigger \(definition.name): delivery to \(definition.url.redacted) failed (\(failure.text)); retrying")
        }
        let nextAttemptAt = clock() + delay
        switch failure {
        case .unreached: try outbox.unreached(id: record.id, error: failure.text, nextAttemptAt: nextAttemptAt)
        case .answered: try outbox.failed(id: record.id, error: failure.text, nextAttemptAt: nextAttemptAt)
        }
        return nextAttemptAt
    }

    /// The CloudEvent `id`: the outbox record's, so it is the same on every retry and after
    /// a restart, prefixed with the instance.
    func eventID(_ record: OutboxRecord) -> String { "\(origin.instance)-\(record.id)" }

    func kill(_ record: OutboxRecord, reason: String) throws {
        try outbox.kill(id: record.id, reason: reason, at: clock())
        state.withLock { $0.status.deadLettered += 1 }
        logger.warning("trigger \(record.trigger): event \(record.id) moved to the dead letters: \(reason)")
    }

    /// The keeper's loop: after a wake-up (a commit) or the idle poll, at most once per
    /// `budgetCheckMilliseconds` (monotonic time), bounds the outbox; the dead letters'
    /// retention at most once per `deadLetterPruneMilliseconds`.
    private func keep() {
        let interval = UInt64(max(1, options.budgetCheckMilliseconds)) * 1_000_000
        var lastCheck: UInt64? = nil
        var lastPrune: UInt64? = nil
        var failures = 0
        while !isStopped {
            let now = DispatchTime.now().uptimeNanoseconds
            if let lastCheck, now - lastCheck < interval {
                // Too soon: wait out the interval (a wake-up meanwhile is covered by the check after it).
                _ = keeperWakeUp.wait(timeout: .now() + .nanoseconds(Int(interval - (now - lastCheck))))
                continue
            }
            lastCheck = now
            let holdsLease = state.withLock { state in
                state.keeperWoken = false
                return state.holdsLease
            }
            let name = self.name
            guard holdsLease else {
                _ = keeperWakeUp.wait(timeout: .now() + .milliseconds(Int(max(1, options.idleMilliseconds))))
                continue
            }
            do {
                if lastPrune.map({ now - $0 >= UInt64(max(1, options.deadLetterPruneMilliseconds)) * 1_000_000 }) ?? true {
                    lastPrune = now
                    try pruneDeadLetters()
                }
                try enforceBacklogBound(name)
                try enforceByteBudget(name)
                try watchStuck(name)
                failures = 0
            } catch {
                // The store is unavailable: tried again after the next wake-up or idle poll.
                failures += 1
                if failures == 1 { logger.error("trigger \(name): cannot bound its outbox: \(error)") }
            }
            _ = keeperWakeUp.wait(timeout: .now() + .milliseconds(Int(max(1, options.idleMilliseconds))))
        }
    }

    /// Dead letters older than the retention go (every trigger's: also those of triggers no
    /// longer declared); each trigger's count goes to its own deliverer (`onPruned`).
    private func pruneDeadLetters() throws {
        let removed = try outbox.pruneDeadLetters(diedBefore: clock() - options.deadLetterRetentionMilliseconds)
        guard !removed.isEmpty else { return }
        onPruned(removed)
        logger.notice("trigger dead letters: \(removed.values.reduce(0, +)) older than \(options.deadLetterRetentionMilliseconds / 1000) s (retention) deleted")
    }

    /// Counts `count` of this trigger's dead letters deleted (by any deliverer's retention round).
    func countRemoved(_ count: Int) {
        state.withLock { $0.status.deadRemoved += count }
    }

    /// Past the trigger's byte budget, the oldest dead letters go, then the newest pending
    /// events past it are dropped (counted and logged): the oldest pending ones, next in
    /// line for delivery, are kept. Read on a reader first; the engine's writer is taken
    /// only when something has to go.
    private func enforceByteBudget(_ name: String) throws {
        let budget = state.withLock { $0.definition.maxStoredBytes } ?? options.maxStoredBytes
        guard let stored = try outbox.storedBytes(trigger: name)[name], stored.total > budget else { return }
        let trim = try outbox.trim(trigger: name, maxBytes: budget)
        state.withLock {
            $0.status.budgetDropped += trim.pendingDropped
            $0.status.deadRemoved += trim.deadRemoved
        }
        if trim.deadRemoved > 0 {
            logger.notice("trigger \(name): \(stored.total) bytes stored, more than its budget of \(budget); the oldest \(trim.deadRemoved) dead letter(s) deleted")
        }
        if trim.pendingDropped > 0 {
            logger.error("trigger \(name) fell behind: \(stored.pending) bytes of events waiting, more than its budget of \(budget) (maxStoredBytes); the newest \(trim.pendingDropped) dropped undelivered")
        }
    }

    /// Logs when the trigger starts and stops being stuck (`StuckWatch`), once each way:
    /// its oldest pending event is read on a reader (one indexed row).
    private func watchStuck(_ name: String) throws {
        let oldest = try outbox.oldestPending(trigger: name)[name]
        let now = clock()
        let change = state.withLock { $0.stuck.observe(oldest, now: now) }
        switch change {
        case .started(let record)?:
            logger.warning("trigger \(name) is stuck: its oldest pending event \(record.id) (\(record.ref ?? "-")) has failed \(record.attempts) counted attempt(s) in \(max(0, now - record.at) / 1000) s, last error: \(record.lastError ?? "-"); later events may wait behind it ('hearth triggers park \(record.id)' sets it aside)")
        case .ended(let id)?:
            logger.notice("trigger \(name) is no longer stuck (it was on event \(id))")
        case nil:
            break
        }
    }

    /// Past `maxPending` waiting events, the newest beyond it go to the dead letters, in
    /// one transaction of the engine's (no event is read into memory for it).
    private func enforceBacklogBound(_ name: String) throws {
        let count = try outbox.pendingCount(trigger: name)
        guard count > options.maxPending else { return }
        let moved = try outbox.killNewest(trigger: name, keep: options.maxPending,
                                          reason: "backlog: more than \(options.maxPending) events were waiting for delivery", at: clock())
        state.withLock {
            $0.status.deadLettered += moved
            $0.status.backlogOverflow += moved
        }
        logger.error("trigger \(name) fell behind: \(count) events waiting, more than \(options.maxPending); the newest \(moved) moved to the dead letters (resend them once the receiver keeps up)")
    }

    /// Milliseconds before attempt `attempt + 1`: base doubling per attempt, capped, with
    /// jitter (half fixed, half random), so receivers coming back are not hit in step.
    func backoff(attempt: Int) -> Int64 {
        let exponent = min(max(attempt - 1, 0), 30)
        let ceiling = min(options.backoffCap, options.backoffBase << Int64(exponent))
        let half = max(1, ceiling / 2)
        return half + Int64.random(in: 0...half)
    }
}
