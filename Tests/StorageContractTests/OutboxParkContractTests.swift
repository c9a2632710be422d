import HearthJSON
import HearthStore
import Testing

/// Setting a stuck event aside and naming it, the same on every engine: the oldest pending
/// event per trigger, an unreached attempt that is not counted, parking pending events
/// into the dead letters and resending them with the same id.
@Suite struct OutboxParkContractTests {
    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    @Test(arguments: ContractEngine.all)
    func theOldestPendingEventPerTriggerDueOrNot(engine: ContractEngine) throws {
        let place = try engine.makePlace()
        let store = try engine.open(place.address, EngineHooks())
        defer { store.close(); _ = place }
        let outbox = store.triggerOutbox
        #expect(try outbox.oldestPending(trigger: nil).isEmpty)
        for n in 0..<3 {
            try store.writeSync(OutboxContractTests.set("/n/\(n)", .int(Int64(n))), check: nil) { _, _ in
                [OutboxEvent(trigger: "a", payload: Self.bytes("a\(n)"))] + (n > 0 ? [OutboxEvent(trigger: "b", payload: Self.bytes("b\(n)"))] : [])
            }
        }
        let a = try outbox.pending(trigger: "a", now: .max, limit: 10)
        let b = try outbox.pending(trigger: "b", now: .max, limit: 10)
        // Not due (a retry far off) is still the oldest; its failure is shown.
        try outbox.failed(id: a[0].id, error: "HTTP 500", nextAttemptAt: .max - 1)
        let oldest = try outbox.oldestPending(trigger: nil)
        #expect(Set(oldest.keys) == ["a", "b"])
        #expect(oldest["a"] == OutboxRecord(id: a[0].id, trigger: "a", seq: a[0].seq, at: a[0].at, payload: Self.bytes("a0"),
                                             attempts: 1, lastError: "HTTP 500", nextAttemptAt: .max - 1))
        #expect(oldest["b"]?.id == b[0].id)
        #expect(try outbox.oldestPending(trigger: "b").mapValues(\.id) == ["b": b[0].id])
        #expect(try outbox.oldestPending(trigger: "c").isEmpty)

        // An unreached attempt: its error and time kept, attempts not counted.
        try outbox.unreached(id: b[0].id, error: "connection refused", nextAttemptAt: 7_000)
        let unreached = try #require(try outbox.oldestPending(trigger: "b")["b"])
        #expect(unreached.attempts == 0 && unreached.lastError == "connection refused" && unreached.nextAttemptAt == 7_000)
        try outbox.unreached(id: 999_999_999, error: "connection refused", nextAttemptAt: 7_000)  // unknown: nothing
    }

    @Test(arguments: ContractEngine.all)
    func parkedEventsAreDeadLettersAsTheyWereAndResendBringsThemBack(engine: ContractEngine) throws {
        let place = try engine.makePlace()
        let store = try engine.open(place.address, EngineHooks())
        defer { store.close(); _ = place }
        let outbox = store.triggerOutbox
        for n in 0..<4 {
            try store.writeSync(OutboxContractTests.set("/n/\(n)", .int(Int64(n))), check: nil) { _, _ in
                [OutboxEvent(trigger: n == 3 ? "b" : "a", payload: Self.bytes("e\(n)"))]
            }
        }
        let a = try outbox.pending(trigger: "a", now: .max, limit: 10)
        let b = try outbox.pending(trigger: "b", now: .max, limit: 10)
        try outbox.failed(id: a[0].id, error: "HTTP 500", nextAttemptAt: 5_000)
        try outbox.failed(id: a[0].id, error: "HTTP 502", nextAttemptAt: 9_000)
        let failing = try #require(try outbox.oldestPending(trigger: "a")["a"])

        // Pending ids move (each once); unknown ids, and ids already dead letters, do not.
        #expect(try outbox.park(ids: [], reason: "r", at: 1).isEmpty)
        let moved = try outbox.park(ids: [b[0].id, 999_999_999, a[0].id, a[0].id], reason: "parked by an operator", at: 12_345)
        #expect(moved == [a[0].id, b[0].id].sorted())
        #expect(try outbox.park(ids: [a[0].id], reason: "again", at: 12_346).isEmpty)
        #expect(try outbox.oldestPending(trigger: nil).mapValues(\.id) == ["a": a[1].id])
        #expect(try outbox.pendingCount(trigger: "a") == 2 && outbox.pendingCount(trigger: "b") == 0)
        let dead = try outbox.deadLetters(trigger: nil, limit: 10)
        #expect(dead.first == DeadLetter(record: failing, reason: "parked by an operator", diedAt: 12_345))
        #expect(dead.map(\.record.id) == moved)

        // Resent: pending again under the same id, in its place (first), attempts reset.
        #expect(try outbox.resend(ids: [a[0].id]) == 1)
        #expect(try outbox.pending(trigger: "a", now: 0, limit: 10).map(\.id) == a.map(\.id))
        #expect(try outbox.oldestPending(trigger: "a")["a"] == OutboxRecord(id: a[0].id, trigger: "a", seq: a[0].seq, at: a[0].at,
                                                                             payload: Self.bytes("e0")))
    }
}
