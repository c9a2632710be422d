import Dispatch
import HearthJSON
import HearthStore
import Synchronization
import Testing

/// A schedule's due times recorded in the outbox (`TriggerOutbox.recordDue`), checked the
/// same way on every engine: a due time becomes one event, across reopening and, on a
/// shared engine, across nodes recording it at once.
@Suite struct ScheduleMarkContractTests {
    static let minute: Int64 = 60_000
    static let everyMinute = "UTC * * * * *"

    @Test(arguments: ContractEngine.all)
    func aDueTimeIsRecordedOnceAfterTheFirstMark(engine: ContractEngine) throws {
        let place = try engine.makePlace()
        let store = try engine.open(place.address, EngineHooks())
        let outbox = store.triggerOutbox
        func record(_ due: Int64, _ schedule: String = Self.everyMinute) throws -> Bool {
            try outbox.recordDue(trigger: "s", schedule: schedule, dueAt: due, payload: Array("due \(due)".utf8))
        }
        // The first due time a schedule sees only sets its mark: it fires from the next one.
        #expect(try !record(Self.minute))
        #expect(try !record(Self.minute))
        #expect(try outbox.pendingCount(trigger: "s") == 0)
        #expect(try record(2 * Self.minute))
        let records = try outbox.pending(trigger: "s", now: 0, limit: 10)
        #expect(records.map(\.at) == [2 * Self.minute])
        #expect(records.allSatisfy { $0.seq == 0 && $0.attempts == 0 && $0.payload == Array("due \(2 * Self.minute)".utf8) })
        // The same or an earlier due time again: nothing (also once delivered).
        #expect(try !record(2 * Self.minute))
        #expect(try !record(Self.minute))
        try outbox.delivered(ids: records.map(\.id))
        #expect(try !record(2 * Self.minute))
        #expect(try outbox.pendingCount(trigger: "s") == 0)
        // A later one after a gap: one event, whatever the gap.
        #expect(try record(1000 * Self.minute))
        #expect(try outbox.pendingCount(trigger: "s") == 1)
        // A changed schedule starts afresh: its first due time only moves the mark.
        #expect(try !record(1005 * Self.minute, "UTC */5 * * * *"))
        #expect(try record(1010 * Self.minute, "UTC */5 * * * *"))
        // Another schedule's mark is its own.
        #expect(try !outbox.recordDue(trigger: "other", schedule: Self.everyMinute, dueAt: 1010 * Self.minute, payload: []))
        #expect(try outbox.pending(trigger: "s", now: 0, limit: 10).map(\.at) == [1000 * Self.minute, 1010 * Self.minute])
        store.close()
        // The mark survives closing and reopening.
        let reopened = try engine.open(place.address, EngineHooks())
        defer { reopened.close(); _ = place }
        #expect(try !reopened.triggerOutbox.recordDue(trigger: "s", schedule: "UTC */5 * * * *", dueAt: 1010 * Self.minute, payload: []))
        #expect(try reopened.triggerOutbox.recordDue(trigger: "s", schedule: "UTC */5 * * * *", dueAt: 1015 * Self.minute, payload: []))
        #expect(try reopened.triggerOutbox.pendingCount(trigger: "s") == 3)
    }

    /// Two openers (on a shared engine: two nodes) recording the same due times at once,
    /// from two threads each: every due time becomes exactly one event, in due order.
    @Test(arguments: ContractEngine.all)
    func openersRecordingTheSameDueTimesAtOnceInsertEachOnce(engine: ContractEngine) throws {
        let place = try engine.makePlace()
        let one = try engine.open(place.address, EngineHooks())
        let two = try engine.open(place.address, EngineHooks())
        defer { one.close(); two.close(); _ = place }
        #expect(try !one.triggerOutbox.recordDue(trigger: "s", schedule: Self.everyMinute, dueAt: 0, payload: []))
        let dueTimes = 40
        let inserted = Atomic<Int>(0)
        let failures = Mutex<[String]>([])
        let outboxes = [one.triggerOutbox, two.triggerOutbox, one.triggerOutbox, two.triggerOutbox]
        DispatchQueue.concurrentPerform(iterations: outboxes.count) { index in
            for due in 1...dueTimes {
                do {
                    if try outboxes[index].recordDue(trigger: "s", schedule: Self.everyMinute, dueAt: Int64(due) * Self.minute, payload: []) {
                        inserted.add(1, ordering: .relaxed)
                    }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
        }
        #expect(failures.withLock { $0 } == [])
        #expect(inserted.load(ordering: .relaxed) == dueTimes)
        let records = try one.triggerOutbox.pending(trigger: "s", now: 0, limit: 100)
        #expect(records.map(\.at) == (1...dueTimes).map { Int64($0) * Self.minute }, "one event per due time, in id order")
    }
}
