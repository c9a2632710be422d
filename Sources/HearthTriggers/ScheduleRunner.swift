import Dispatch
import Foundation
import HearthStore
import Logging
import Synchronization

/// Turns the schedules' due times into outbox events, which the schedules' deliverers then
/// deliver like any database trigger's (same retries, dead letters and commands).
///
/// One thread looks at every schedule when the earliest next due time comes (at the
/// latest every `ScheduleLimits.maxSleepMilliseconds`, and at once when the set changes)
/// and records each schedule's LATEST due time at or before now (`TriggerOutbox.recordDue`):
/// - exactly once across restarts and nodes: the store's mark decides, in a transaction,
///   whether that due time is new; every node of a shared store runs a runner, one inserts;
/// - due times missed while no node ran: only the latest of them is recorded (once, at
///   start), so a schedule of every minute after a month down makes one event, not 43,200;
/// - a new or changed schedule fires from its next due time, not for a time before it.
final class ScheduleRunner: Sendable {
    private struct State {
        var schedules: [TriggerDefinition] = []
        /// Per trigger, the due time already handed to the store (recorded here or found
        /// recorded): not asked again.
        var handled: [String: (schedule: String, dueAt: Int64)] = [:]
        /// Schedules whose last recording failed (the store unavailable): logged once.
        var failing: Set<String> = []
        var woken = false
        var started = false
        var stopped = false
    }

    private let outbox: any TriggerOutbox
    private let clock: @Sendable () -> Int64
    private let logger: Logger
    private let state = Mutex(State())
    private let wakeUp = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)

    init(outbox: any TriggerOutbox, clock: @escaping @Sendable () -> Int64, logger: Logger) {
        (self.outbox, self.clock, self.logger) = (outbox, clock, logger)
    }

    /// The schedules among `definitions` become the running set.
    func replace(_ definitions: [TriggerDefinition]) {
        state.withLock { $0.schedules = definitions.filter { $0.schedule != nil } }
        wake()
    }

    /// Starts the thread; `recorded` hears each trigger a due time was recorded for (its
    /// deliverer is woken).
    func start(recorded: @escaping @Sendable (String) -> Void) {
        let go = state.withLock { state in
            defer { state.started = true }
            return !state.started && !state.stopped
        }
        guard go else { return }
        Thread.detachNewThread { [self] in
            while !state.withLock({ $0.stopped }) {
                let wait = round(recorded: recorded)
                if wakeUp.wait(timeout: .now() + .milliseconds(Int(max(1, wait)))) == .success {
                    state.withLock { $0.woken = false }
                }
            }
            finished.signal()
        }
    }

    func stop() {
        let running = state.withLock { state in
            defer { state.stopped = true }
            return state.started && !state.stopped
        }
        guard running else { return }
        wakeUp.signal()
        _ = finished.wait(timeout: .now() + .seconds(TriggerDeliverer.stopWaitSeconds))
    }

    private func wake() {
        let signal = state.withLock { state in
            defer { state.woken = true }
            return !state.woken
        }
        if signal { wakeUp.signal() }
    }

    /// Records each schedule's latest due time (when not handled yet); returns how long to
    /// sleep: until the earliest next due time, at most `ScheduleLimits.maxSleepMilliseconds`.
    func round(recorded: @Sendable (String) -> Void) -> Int64 {
        let (schedules, handled) = state.withLock { ($0.schedules, $0.handled) }
        let now = clock()
        var wait = ScheduleLimits.maxSleepMilliseconds
        for definition in schedules {
            guard let schedule = definition.schedule else { continue }
            if let next = schedule.next(after: now) { wait = min(wait, next - now) }
            guard let due = schedule.latest(atOrBefore: now) else { continue }
            if let done = handled[definition.name], done.schedule == schedule.key, done.dueAt >= due { continue }
            do {
                let inserted = try outbox.recordDue(trigger: definition.name, schedule: schedule.key, dueAt: due,
                                                    payload: ScheduledInvocation.payload(schedule, dueAt: due))
                let recovered = state.withLock { state in
                    state.handled[definition.name] = (schedule.key, due)
                    return state.failing.remove(definition.name) != nil
                }
                if recovered { logger.notice("schedule \(definition.name): due times are recorded again") }
                if inserted {
                    logger.info("schedule \(definition.name): due time \(ScheduledInvocation.scheduleTime(due)) recorded")
                    recorded(definition.name)
                }
            } catch {
                // The store is unavailable: asked again at the next round (the mark decides),
                // within the backoff base; logged when it starts failing.
                if state.withLock({ $0.failing.insert(definition.name).inserted }) {
                    logger.error("schedule \(definition.name): cannot record its due time \(ScheduledInvocation.scheduleTime(due)): \(error)")
                }
                wait = min(wait, TriggerLimits.backoffBaseMilliseconds)
            }
        }
        return wait
    }
}
