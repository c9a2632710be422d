import HearthJSON
import HearthSQLite
import HearthStore
import HearthTesting
import Logging
import Synchronization
import Testing
@testable import HearthTriggers

/// The operators' overview's and the loop guard's bounds, crossed: dead letters counted,
/// resent in batches, marks remembered, log lines spaced.
@Suite struct TriggerOverviewTests {
    let directory = TemporaryDirectory()
    let store: SQLiteTreeStore

    init() throws { store = try SQLiteTreeStore(directory: directory.path) }

    /// `count` events of `trigger` recorded by one write, then all moved to the dead letters.
    func deadLetters(_ count: Int, trigger: String) throws {
        let events = (0..<count).map { _ in TriggerRateGuardTests.event(trigger) }
        try store.writeSync(.set(WriteEntry(path: try DataPath(string: "/w/\(trigger)"), value: .int(Int64(count)))), check: nil,
                            effects: { _, _ in events })
        for record in try store.triggerOutbox.pending(trigger: trigger, now: .max, limit: count) {
            try store.triggerOutbox.kill(id: record.id, reason: "test", at: 1)
        }
    }

    @Test func deadLettersAreCountedUpToTheLimit() throws {
        try deadLetters(3, trigger: "a")
        try deadLetters(1, trigger: "b")
        let all = try TriggerOverview.all(declared: [], outbox: store.triggerOutbox, deadCountLimit: 4)
        #expect(all.map(\.name) == ["a", "b"] && all.map(\.dead) == [3, 1] && all.allSatisfy { $0.event == nil && $0.url == nil })
        let capped = try TriggerOverview.all(declared: [], outbox: store.triggerOutbox, deadCountLimit: 3)
        // Oldest first: b's is past the limit, so it is not counted; its row still shows, by
        // its stored bytes.
        #expect(capped.map(\.name) == ["a", "b"] && capped.map(\.dead) == [3, 0])
        #expect(capped.allSatisfy { $0.storedBytes > 0 && $0.maxStoredBytes == nil })
        #expect(TriggerLimits.maxDeadLettersCounted > 0)
    }

    @Test func resendAllGoesInBatchesAndKeepsToItsTrigger() throws {
        try deadLetters(5, trigger: "a")
        try deadLetters(2, trigger: "b")
        let outbox = store.triggerOutbox
        #expect(try TriggerOverview.resendAll(trigger: "a", outbox: outbox, batchSize: 2) == 5)
        #expect(try outbox.pendingCount(trigger: "a") == 5 && outbox.deadLetters(trigger: "b", limit: 10).count == 2)
        #expect(try TriggerOverview.resendAll(trigger: nil, outbox: outbox, batchSize: 1) == 2)
        #expect(try outbox.deadLetters(trigger: nil, limit: 10).isEmpty)
        #expect(try TriggerOverview.resendAll(trigger: nil, outbox: outbox) == 0)
    }

    /// Past `maxOutstandingMarks`, the oldest mark is forgotten: its event would be delivered.
    @Test func marksPastTheLimitAreForgottenOldestFirst() {
        let clock = TriggerRateGuardTests.ManualClock()
        let guardian = TriggerRateGuard(eventsPerSecond: 1, burst: 1, maxOutstandingMarks: 2, clock: clock.read, logger: Logger(label: "test"))
        let admitted = guardian.admit((0..<4).map { _ in TriggerRateGuardTests.event("loop") })
        let records = admitted.enumerated().map { OutboxRecord(id: Int64($0.offset), trigger: "loop", seq: 1, at: 0, payload: $0.element.payload) }
        #expect(records.map { TriggerRateGuard.isMarked($0.payload) } == [false, true, true, true])
        #expect(records.map { guardian.consume($0) } == [false, false, true, true])
        #expect(TriggerRateGuard.maxOutstandingMarks >= TriggerLimits.maxPendingPerTrigger)
    }

    /// One warning per trigger per `logIntervalMilliseconds` while it is rate limited, with
    /// the count since the last.
    @Test func warningsAreSpaced() {
        let logs = CapturedLogs()
        let clock = TriggerRateGuardTests.ManualClock()
        let guardian = TriggerRateGuard(eventsPerSecond: 1, burst: 1, clock: clock.read, logger: Logger(label: "t", factory: logs.handler))
        _ = guardian.admit((0..<3).map { _ in TriggerRateGuardTests.event("loop") })
        clock.advance(TriggerRateGuard.logIntervalMilliseconds - 1)
        _ = guardian.admit((0..<3).map { _ in TriggerRateGuardTests.event("loop") })  // one admitted (refilled), two limited
        var messages: [String] { logs.lines.withLock { $0.map(\.message) } }
        #expect(messages.count == 1 && messages[0].contains("trigger loop records events faster than 1/s (burst 1): 1 event(s)"))
        clock.advance(1)
        _ = guardian.admit([TriggerRateGuardTests.event("loop")])
        #expect(messages.count == 2 && messages[1].contains(": 4 event(s)"))
    }
}
