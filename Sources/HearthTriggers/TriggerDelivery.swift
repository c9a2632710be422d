import HearthDatabase
import HearthStore
import Logging
import Synchronization

/// The triggers of one database: the effects every write runs (which events it
/// causes, recorded in its own transaction) and one deliverer per trigger. Built by the
/// composition root over the engine's outbox; `replace` swaps the declared set (SIGHUP).
///
/// Hooks for operators' tools: `status()` (per trigger: counters, last error, pending
/// and the age of the oldest), `outbox` (dead letters, resend).
public final class TriggerDelivery: CommitObserver, Sendable {
    public let outbox: any TriggerOutbox
    private let options: TriggerDeliverer.Options
    private let clock: @Sendable () -> Int64
    /// The delivery's clock (ms since the epoch): what its ages are measured against.
    public func now() -> Int64 { clock() }
    private let logger: Logger
    private struct State {
        var origin: EventOrigin
        var matcher: TriggerMatcher
        var deliverers: [String: TriggerDeliverer] = [:]
        /// Deliverers run between `start` and `close`; before, writes only record events.
        var started = false
        var closed = false
    }
    private let current: Mutex<State>

    /// `maxPending` (default `TriggerLimits.maxPendingPerTrigger`), `maxStoredBytes` (the
    /// byte budget of a trigger that sets none, default `TriggerLimits.defaultMaxStoredBytes`),
    /// `deadLetterRetentionMilliseconds`, `maxEventsPerWrite` and the backoff's base and cap
    /// are parameters so tests can cross them.
    public init(outbox: any TriggerOutbox, origin: EventOrigin, logger: Logger, clock: @escaping @Sendable () -> Int64,
                maxPending: Int = TriggerLimits.maxPendingPerTrigger,
                maxStoredBytes: Int64 = TriggerLimits.defaultMaxStoredBytes,
                deadLetterRetentionMilliseconds: Int64 = TriggerLimits.deadLetterRetentionSeconds * 1000,
                maxEventsPerWrite: Int = TriggerLimits.maxEventsPerWrite,
                backoffBaseMilliseconds: Int64 = TriggerLimits.backoffBaseMilliseconds,
                backoffCapMilliseconds: Int64 = TriggerLimits.backoffCapMilliseconds,
                eventsPerSecond: Int = TriggerRateGuard.defaultEventsPerSecond, burst: Int = TriggerRateGuard.defaultBurst,
                runsSchedules: Bool = true) {
        (self.outbox, self.clock, self.logger) = (outbox, clock, logger)
        scheduler = runsSchedules ? ScheduleRunner(outbox: outbox, clock: clock, logger: logger) : nil
        rateGuard = TriggerRateGuard(eventsPerSecond: eventsPerSecond, burst: burst, clock: clock, logger: logger)
        current = Mutex(State(origin: origin, matcher: TriggerMatcher(triggers: [], instance: origin.instance)))
        var options = TriggerDeliverer.Options()
        options.maxPending = maxPending
        options.maxStoredBytes = maxStoredBytes
        options.deadLetterRetentionMilliseconds = deadLetterRetentionMilliseconds
        options.backoffBase = backoffBaseMilliseconds
        options.backoffCap = backoffCapMilliseconds
        options.rateGuard = rateGuard
        self.options = options
        self.maxEventsPerWrite = maxEventsPerWrite
    }

    private let maxEventsPerWrite: Int
    /// Records the schedules' due times (`ScheduleRunner`); nil where schedules do not run
    /// (a namespace other than the default: a schedule fires once, not once per database).
    private let scheduler: ScheduleRunner?
    /// The loop guard: each trigger's rate of recorded events (`TriggerRateGuard`).
    public let rateGuard: TriggerRateGuard

    /// Where the events say they come from.
    public var origin: EventOrigin { current.withLock { $0.origin } }

    /// Makes `definitions` the running set: new triggers start delivering, removed ones
    /// stop (their pending events stay in the outbox until a trigger of that name is back),
    /// changed ones use the new definition from their next attempt.
    public func replace(_ definitions: [TriggerDefinition]) {
        let instance = origin.instance
        let matcher = TriggerMatcher(triggers: definitions, instance: instance)
        for skipped in definitions where !matcher.triggers.contains(skipped) {
            logger.warning("trigger \(skipped.name): its instance pattern \(skipped.instance?.text ?? "") does not match the database instance \(instance); it never fires for it")
        }
        reconcile { $0.matcher = matcher }
        scheduler?.replace(matcher.triggers)
    }

    /// Reads the triggers file at `path` and makes it the running set; a bad file changes
    /// nothing (SIGHUP: the old set keeps running).
    public func reload(path: String) throws(TriggerConfigError) {
        replace(try TriggerConfig.load(path: path))
    }

    /// Starts delivering (once the server knows its address: `databaseHost`).
    public func start(databaseHost: String) {
        reconcile { state in
            state.origin.databaseHost = databaseHost
            state.started = true
        }
        scheduler?.start { [weak self] name in self?.wake(name) }
    }

    /// A schedule's due time was recorded: its deliverer looks at its outbox now.
    private func wake(_ name: String) {
        current.withLock { $0.deliverers[name] }?.wake()
    }

    private func reconcile(_ change: (inout State) -> Void) {
        var started: [TriggerDeliverer] = []
        let stopped: [TriggerDeliverer] = current.withLock { current in
            guard !current.closed else { return [] }
            change(&current)
            guard current.started else { return [] }
            var kept: [String: TriggerDeliverer] = [:]
            for definition in current.matcher.triggers {
                if let running = current.deliverers[definition.name] {
                    running.update(definition)
                    kept[definition.name] = running
                } else {
                    let deliverer = TriggerDeliverer(definition: definition, outbox: outbox, origin: current.origin, options: options,
                                                     clock: clock, logger: logger) { [weak self] removed in self?.countPruned(removed) }
                    kept[definition.name] = deliverer
                    started.append(deliverer)
                }
            }
            let gone = current.deliverers.filter { kept[$0.key] == nil }.map(\.value)
            current.deliverers = kept
            return gone
        }
        for deliverer in started { deliverer.start() }
        for deliverer in stopped { deliverer.stop() }
    }

    /// Dead letters the retention deleted: counted on each running trigger's deliverer
    /// (those of triggers not running here are only logged).
    private func countPruned(_ removed: [String: Int]) {
        let deliverers = current.withLock { $0.deliverers }
        for (name, count) in removed { deliverers[name]?.countRemoved(count) }
    }

    /// The declared triggers (those of this database's instance).
    public var definitions: [TriggerDefinition] { current.withLock { $0.matcher.triggers } }

    /// The names of the running triggers.
    public var triggerNames: [String] { current.withLock { $0.matcher.triggers.map(\.name) } }

    /// The effects of a write by `caller` (`Database`'s effects provider): nil when no
    /// trigger is declared, so such writes cost nothing.
    public func effects(for caller: Caller) -> WriteEffects? {
        let matcher = current.withLock { $0.matcher }
        guard !matcher.triggers.isEmpty else { return nil }
        let auth = EventAuth(caller)
        let (limit, rateGuard) = (maxEventsPerWrite, self.rateGuard)
        let rates = matcher.eventsPerSecond
        return { before, applied in
            rateGuard.admit(try matcher.events(before: before, applied: applied, auth: auth, limit: limit).map {
                OutboxEvent(trigger: $0.trigger, payload: $0.payload)
            }, rates: rates)
        }
    }

    /// Changes were committed (on this node or, on a shared engine, another): the
    /// deliverers of triggers whose patterns could match them look at their outbox. The
    /// engine's `onCommit` calls it.
    public func committed(_ changes: [Change]) {
        let (matcher, deliverers) = current.withLock { ($0.matcher, $0.deliverers) }
        for trigger in matcher.triggers where trigger.schedule == nil && changes.contains(where: { TriggerMatcher.affects(trigger.ref, $0.path) }) {
            deliverers[trigger.name]?.wake()
        }
    }

    /// Dead letters were moved back to pending here (the console): every deliverer looks
    /// at its outbox now. (Another process's resend is seen within `TriggerLimits.idlePollMilliseconds`.)
    public func resent() {
        for deliverer in current.withLock({ Array($0.deliverers.values) }) { deliverer.rescan() }
    }

    /// Per trigger: this process's counters and last error, with the outbox's backlog and
    /// the payload bytes it keeps (pending and dead letters: what its byte budget bounds).
    public func status() -> [(status: TriggerStatus, pending: Int, oldestPendingAt: Int64?, storedBytes: Int64)] {
        let deliverers = current.withLock { Array($0.deliverers.values) }
        let backlog = (try? outbox.backlog()) ?? [:]
        let stored = (try? outbox.storedBytes(trigger: nil)) ?? [:]
        return deliverers.map { deliverer in
            let status = deliverer.status
            let waiting = backlog[status.name]
            return (status, waiting?.pending ?? 0, waiting?.oldestAt, stored[status.name]?.total ?? 0)
        }.sorted { $0.status.name < $1.status.name }
    }

    /// The byte budget of a trigger that sets none (`maxStoredBytes`).
    public var defaultBudget: Int64 { options.maxStoredBytes }

    /// Stops every deliverer (each after the attempt under way). Pending events stay.
    public func close() {
        scheduler?.stop()
        let all = current.withLock { current in
            current.closed = true
            defer { current.deliverers = [:] }
            return Array(current.deliverers.values)
        }
        for deliverer in all { deliverer.stop() }
    }
}
