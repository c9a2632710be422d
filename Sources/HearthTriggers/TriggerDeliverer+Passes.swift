import Dispatch
import Foundation
import HearthHTTPClient
import HearthJSON
import HearthStore

/// The delivery loop's passes over the backlog: reading it into the `LocationScheduler`,
/// starting the events it picks, recording the outcomes.
extension TriggerDeliverer {
    /// Reads the backlog after the scheduler's cursor while its buffer has room. Delivered
    /// events are removed from the outbox before (`settle`), so none is read again.
    func read(into scheduler: inout LocationScheduler<OutboxRecord>, trigger: String, now: Int64) throws {
        let keyed = scheduler.maxConcurrency > 1
        while scheduler.wantsRead && !isStopped {
            let records = try outbox.pending(trigger: trigger, after: scheduler.cursor, limit: options.batchSize)
            let before = scheduler.cursor
            scheduler.accept(records.map { record in
                (record.id, keyed ? Self.location(record.payload) : "", record.nextAttemptAt, record.payload.count, record)
            }, requested: options.batchSize, now: now)
            if scheduler.cursor == before { break }  // the buffer is full
        }
    }

    /// The location an event is ordered by: its `ce-subject`, the stored `ref`. A payload
    /// this module did not write shares one location (its event goes to the dead letters).
    static func location(_ payload: [UInt8]) -> String {
        PayloadRef.ref(payload) ?? ""
    }

    func nextSweep(_ scheduler: LocationScheduler<OutboxRecord>) -> Int64? {
        scheduler.nextSweep(idle: options.idleMilliseconds, minPass: options.minPassMilliseconds, cheapReads: options.batchSize)
    }

    /// How long to sleep: until the next sweep is due, at most the idle poll; attempts
    /// ending and commits wake it sooner.
    func wait(_ scheduler: LocationScheduler<OutboxRecord>, now: Int64) -> Int64 {
        nextSweep(scheduler).map { $0 - now } ?? options.idleMilliseconds
    }

    /// Starts every event the scheduler picks: those that go to the dead letters unsent
    /// (the loop guard, past the max age, not encodable) are settled here.
    func start(_ scheduler: inout LocationScheduler<OutboxRecord>, _ done: inout [Int64], definition: TriggerDefinition) throws {
        while !isStopped, let entry = scheduler.next(now: clock()) {
            let record = entry.item
            let now = clock()
            if options.rateGuard?.consume(record) == true {  // logged by the guard, not per event
                try outbox.kill(id: record.id, reason: TriggerRateGuard.reason, at: now)
                state.withLock { $0.status.deadLettered += 1 }
                scheduler.finished(entry, .done)
                continue
            }
            if definition.retry && now - record.at > options.maxEventAgeMilliseconds {
                try kill(record, reason: "older than \(options.maxEventAgeMilliseconds / 1000) s (maxEventAge) after \(record.attempts) attempt(s): \(record.lastError ?? "none delivered")")
                scheduler.finished(entry, .done)
                continue
            }
            let request: HTTPClientRequest
            do {
                request = try CloudEventEncoding.request(id: eventID(record), at: record.at, payload: record.payload,
                                                         trigger: definition, origin: origin)
            } catch {
                try kill(record, reason: error.description)
                scheduler.finished(entry, .done)
                continue
            }
            let timeout = definition.timeoutSeconds
            attemptThreads.run { [self] in
                let failure = attempt(request, timeoutSeconds: timeout)
                return { [self] in  // once this thread is idle again: the loop may start the next at once
                    let signal = state.withLock { state in
                        state.completions.append(Completion(entry: entry, failure: failure, at: clock()))
                        defer { state.woken = true }
                        return !state.woken
                    }
                    if signal { wakeUp.signal() }
                }
            }
        }
    }

    /// Records the attempts that ended: delivered ones are removed (together, at the end),
    /// failed ones retried later or given up; their locations move on or are held back.
    func settle(_ scheduler: inout LocationScheduler<OutboxRecord>, _ done: inout [Int64], definition: TriggerDefinition) throws {
        var ended = state.withLock { state in
            defer { state.completions = [] }
            return state.completions[...]
        }
        do {
            while let completion = ended.first {
                try record(completion, &scheduler, &done, definition: definition)
                ended.removeFirst()
            }
            if !done.isEmpty { try outbox.delivered(ids: done) }
            done = []
        } catch {
            // The store failed: what is not recorded yet is recorded on the next round.
            state.withLock { $0.completions.insert(contentsOf: ended, at: 0) }
            throw error
        }
    }

    func record(_ completion: Completion, _ scheduler: inout LocationScheduler<OutboxRecord>, _ done: inout [Int64],
                        definition: TriggerDefinition) throws {
        let (entry, record) = (completion.entry, completion.entry.item)
        guard let failure = completion.failure else {
            done.append(record.id)
            state.withLock {
                $0.status.delivered += 1
                $0.status.lastError = nil
                $0.status.lastDeliveredAt = completion.at
            }
            scheduler.finished(entry, .done)
            return
        }
        if !definition.retry {
            try kill(record, reason: "not retried (retry: false): \(failure.text)")
        } else {
            let nextAttemptAt = try retry(record, after: failure, definition: definition)
            scheduler.finished(entry, .retry(at: nextAttemptAt))
        }
        state.withLock {
            $0.status.failedAttempts += 1
            $0.status.lastError = failure.text
        }
        if !definition.retry { scheduler.finished(entry, .done) }
    }

    /// At stop: waits for the attempts under way (at most `stopWaitSeconds`) and records
    /// them, so a clean stop sends nothing twice.
    func finish(_ scheduler: inout LocationScheduler<OutboxRecord>, _ done: inout [Int64]) {
        let deadline = DispatchTime.now() + .seconds(Self.stopWaitSeconds)
        let definition = state.withLock { $0.definition }
        while !scheduler.inFlight.isEmpty {
            try? settle(&scheduler, &done, definition: definition)
            if scheduler.inFlight.isEmpty || wakeUp.wait(timeout: deadline) == .timedOut { break }
            // Woken: the next attempt to end signals again (else it would find `woken` set
            // and this would wait out the whole deadline).
            state.withLock { $0.woken = false }
        }
        try? settle(&scheduler, &done, definition: definition)
    }
}
