import Dispatch
import HearthJSON
import HearthStore
import Synchronization
import Testing

/// The triggers' outbox (docs/design.md §11, docs/architecture.md "The storage contract"),
/// checked the same way on every engine: a write's events commit in its transaction, ids
/// follow commit order, the delivery state behaves as `TriggerOutbox` documents.
@Suite struct OutboxContractTests {
    static func path(_ text: String) -> DataPath { try! DataPath(string: text) }
    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }
    struct Refused: Error {}

    /// Effects giving one event per entry for `trigger`, its payload "<path>:<before>→<after>"
    /// (the value before read on the view the effects get, the value after as applied).
    static func perEntry(_ trigger: String) -> WriteEffects {
        { before, applied in
            try applied.entries.map { entry in
                let old = String(decoding: JSONWriter.write(try before.value(at: entry.path)), as: UTF8.self)
                let new = String(decoding: JSONWriter.write(entry.value ?? .null), as: UTF8.self)
                return OutboxEvent(trigger: trigger, payload: bytes("\(entry.path):\(old)→\(new)"))
            }
        }
    }

    static func set(_ text: String, _ value: JSONValue?) -> WriteOperation {
        .set(WriteEntry(path: path(text), value: value))
    }

    @Test(arguments: ContractEngine.all)
    func aWritesEventsCommitWithItWithItsSeqAndTime(engine: ContractEngine) throws {
        let place = try engine.makePlace()
        let store = try engine.open(place.address, EngineHooks())
        defer { store.close(); _ = place }
        let outbox = store.triggerOutbox
        try store.writeSync(Self.set("/a/x", 1), check: nil)
        // The effects see the state before the write and the operation as applied (server
        // values resolved).
        let first = try store.writeSync(.update(base: Self.path("/a"), entries: [
            WriteEntry(path: Self.path("/a/x"), value: 2),
            WriteEntry(path: Self.path("/a/t"), value: [".sv": "timestamp"]),
        ]), check: nil, effects: Self.perEntry("t1"))
        let records = try outbox.pending(trigger: "t1", now: 0, limit: 10)
        #expect(records.map(\.payload) == [Self.bytes("/a/x:1→2"), Self.bytes("/a/t:null→\(first.at)")])
        #expect(records.allSatisfy { $0.seq == first.seq && $0.at == first.at && $0.attempts == 0 && $0.lastError == nil && $0.nextAttemptAt == 0 })
        #expect(records.count == 2 && records[0].id < records[1].id)
        // Events of several triggers, and an empty payload.
        try store.writeSync(Self.set("/b", true), check: nil) { _, _ in
            [OutboxEvent(trigger: "t2", payload: []), OutboxEvent(trigger: "t1", payload: Self.bytes("b"))]
        }
        #expect(try outbox.pending(trigger: "t2", now: 0, limit: 10).map(\.payload) == [[]])
        #expect(try outbox.pending(trigger: "t1", now: 0, limit: 10).map(\.payload).last == Self.bytes("b"))
        // No effects, or effects returning none: no events.
        try store.writeSync(Self.set("/c", 1), check: nil)
        try store.writeSync(Self.set("/c", 2), check: nil) { _, _ in [] }
        #expect(try outbox.pendingCount(trigger: "t1") == 3)
        #expect(try outbox.pendingCount(trigger: "t2") == 1)
        #expect(try outbox.pendingCount(trigger: "none") == 0)
    }

    @Test(arguments: ContractEngine.all)
    func aRefusedWriteLeavesNoEventsAndItsBatchCommitsTheOthers(engine: ContractEngine) throws {
        let place = try engine.makePlace()
        let store = try engine.open(place.address, EngineHooks())
        defer { store.close(); _ = place }
        let effectsRan = Mutex(0)
        let counting: WriteEffects = { before, applied in
            effectsRan.withLock { $0 += 1 }
            return try Self.perEntry("t")(before, applied)
        }
        // A check that throws: the effects do not run.
        #expect(throws: WriteFailure.self) { try store.writeSync(Self.set("/x", 1), check: { _, _ in throw Refused() }, effects: counting) }
        #expect(effectsRan.withLock { $0 } == 0)
        // Effects that throw reject that write alone, as a check would; writes queued with
        // it (most likely in its batch) commit with their events.
        let done = DispatchGroup()
        let results = Mutex<[String: Result<WriteOutcome, WriteFailure>]>([:])
        for key in ["ok1", "refused", "ok2"] {
            done.enter()
            store.write(.update(base: .root, entries: [WriteEntry(path: Self.path("/b/\(key)"), value: 1),
                                                       WriteEntry(path: Self.path("/x"), value: .string(key))]),
                        check: nil, effects: { before, applied in
                            if key == "refused" { throw Refused() }
                            return try counting(before, applied)
                        }) { result in
                results.withLock { $0[key] = result }
                done.leave()
            }
        }
        #expect(done.wait(timeout: .now() + .seconds(60)) == .success)
        let outcomes = results.withLock { $0 }
        guard case .failure(.rejected(let error))? = outcomes["refused"] else {
            Issue.record("the write whose effects threw: \(String(describing: outcomes["refused"]))")
            return
        }
        #expect(error is Refused)
        let seqs = try ["ok1", "ok2"].map { try #require(try outcomes[$0]?.get().seq) }
        #expect(try store.readSync { try $0.value(at: Self.path("/b")) } == ["ok1": 1, "ok2": 1])
        let records = try store.triggerOutbox.pending(trigger: "t", now: 0, limit: 10)
        #expect(records.map(\.seq) == [seqs[0], seqs[0], seqs[1], seqs[1]], "one event per entry of each committed write, none of the refused one")
        #expect(!records.contains { String(decoding: $0.payload, as: UTF8.self).contains("refused") })
    }

    @Test(arguments: ContractEngine.all)
    func idsFollowCommitOrderAcrossTriggers(engine: ContractEngine) throws {
        let place = try engine.makePlace()
        let store = try engine.open(place.address, EngineHooks())
        defer { store.close(); _ = place }
        let writes = 40
        let done = DispatchGroup()
        DispatchQueue.concurrentPerform(iterations: writes) { n in
            done.enter()
            store.write(Self.set("/w/\(n)", .int(Int64(n))), check: nil, effects: { _, _ in
                (0..<3).map { OutboxEvent(trigger: "t\(($0 + n) % 2)", payload: Self.bytes("\(n).\($0)")) }
            }) { _ in done.leave() }
        }
        #expect(done.wait(timeout: .now() + .seconds(60)) == .success)
        let all = try ["t0", "t1"].flatMap { try store.triggerOutbox.pending(trigger: $0, now: 0, limit: 1000) }.sorted { $0.id < $1.id }
        #expect(all.count == 3 * writes)
        #expect(Set(all.map(\.id)).count == all.count)
        // In id order: seqs never go down, and one write's events keep their order.
        #expect(zip(all, all.dropFirst()).allSatisfy { $0.seq <= $1.seq }, "ids out of commit order")
        for group in Dictionary(grouping: all, by: \.seq).values {
            #expect(group.map { String(decoding: $0.payload, as: UTF8.self).split(separator: ".").last! } == ["0", "1", "2"])
        }
        #expect(Set(all.map(\.seq)).count == writes)
    }

    @Test(arguments: ContractEngine.all)
    func deliveryStateMovesAsDocumented(engine: ContractEngine) throws {
        let place = try engine.makePlace()
        let store = try engine.open(place.address, EngineHooks())
        defer { store.close(); _ = place }
        let outbox = store.triggerOutbox
        var outcomes: [WriteOutcome] = []
        for n in 0..<5 {
            outcomes.append(try store.writeSync(Self.set("/n/\(n)", .int(Int64(n))), check: nil) { _, _ in
                [OutboxEvent(trigger: "a", payload: Self.bytes("a\(n)"))] + (n < 2 ? [OutboxEvent(trigger: "b", payload: Self.bytes("b\(n)"))] : [])
            })
        }
        let a = try outbox.pending(trigger: "a", now: 0, limit: 100)
        #expect(a.map(\.payload) == (0..<5).map { Self.bytes("a\($0)") })
        #expect(try outbox.pending(trigger: "a", now: 0, limit: 2).map(\.id) == Array(a.prefix(2).map(\.id)))
        #expect(try outbox.backlog().mapValues { "\($0.pending) \($0.oldestAt.map(String.init) ?? "-")" }
                == ["a": "5 \(outcomes[0].at)", "b": "2 \(outcomes[0].at)"])

        // A failed attempt: counted, its error kept, not pending again before its time.
        try outbox.failed(id: a[0].id, error: "HTTP 503", nextAttemptAt: 5_000)
        try outbox.failed(id: a[0].id, error: "timeout", nextAttemptAt: 9_000)
        #expect(try outbox.pending(trigger: "a", now: 8_999, limit: 100).map(\.id) == a.dropFirst().map(\.id))
        let retried = try #require(try outbox.pending(trigger: "a", now: 9_000, limit: 100).first)
        #expect(retried.id == a[0].id && retried.attempts == 2 && retried.lastError == "timeout" && retried.nextAttemptAt == 9_000)
        #expect(retried.payload == a[0].payload && retried.seq == a[0].seq)

        // Delivered: gone (an unknown id is ignored).
        try outbox.delivered(ids: [a[1].id, a[2].id, 999_999_999])
        #expect(try outbox.pending(trigger: "a", now: 10_000, limit: 100).map(\.id) == [a[0].id, a[3].id, a[4].id])
        #expect(try outbox.pendingCount(trigger: "a") == 3)

        // Killed: a dead letter with its record as it was, and out of the pending.
        try outbox.kill(id: a[0].id, reason: "max age", at: 12_345)
        let b = try outbox.pending(trigger: "b", now: 0, limit: 100)
        try outbox.kill(id: b[1].id, reason: "no retry", at: 12_346)
        #expect(try outbox.pendingCount(trigger: "a") == 2)
        let dead = try outbox.deadLetters(trigger: nil, limit: 100)
        #expect(dead.map(\.record.id) == [a[0].id, b[1].id])
        #expect(dead.first == DeadLetter(record: retried, reason: "max age", diedAt: 12_345))
        #expect(try outbox.deadLetters(trigger: "b", limit: 100).map(\.reason) == ["no retry"])
        #expect(try outbox.deadLetters(trigger: "a", limit: 0).isEmpty)
        #expect(try outbox.deadLetters(trigger: "c", limit: 100).isEmpty)

        // Re-sent: back in the pending with its id and payload, attempts reset; an id that is
        // no dead letter moves nothing.
        #expect(try outbox.resend(ids: [a[0].id, 424_242]) == 1)
        #expect(try outbox.resend(ids: [a[0].id]) == 0)
        let again = try outbox.pending(trigger: "a", now: 0, limit: 100)
        #expect(again.map(\.id) == [a[0].id, a[3].id, a[4].id])
        #expect(again[0] == OutboxRecord(id: a[0].id, trigger: "a", seq: a[0].seq, at: a[0].at, payload: a[0].payload))
        #expect(try outbox.deadLetters(trigger: nil, limit: 100).map(\.record.id) == [b[1].id])

        try outbox.delivered(ids: (again + b).map(\.id))
        #expect(try outbox.backlog().isEmpty)
        #expect(try outbox.pendingCount(trigger: "a") == 0)
        // Later events get larger ids than any earlier one.
        try store.writeSync(Self.set("/later", 1), check: nil) { _, _ in [OutboxEvent(trigger: "a", payload: [1])] }
        #expect(try outbox.pending(trigger: "a", now: 0, limit: 1).first.map { $0.id > a[4].id } == true)
    }

    /// A deliverer's pass: reads after a cursor, in id order, due or not, one trigger only;
    /// consecutive reads from the last id seen read every pending event exactly once.
    @Test(arguments: ContractEngine.all)
    func aPassReadsEveryPendingEventOnceAfterItsCursor(engine: ContractEngine) throws {
        let place = try engine.makePlace()
        let store = try engine.open(place.address, EngineHooks())
        defer { store.close(); _ = place }
        let outbox = store.triggerOutbox
        for n in 0..<7 {
            try store.writeSync(Self.set("/p/\(n)", .int(Int64(n))), check: nil) { _, _ in
                [OutboxEvent(trigger: "a", payload: Self.bytes("a\(n)")), OutboxEvent(trigger: "b", payload: Self.bytes("b\(n)"))]
            }
        }
        let all = try outbox.pending(trigger: "a", now: .max, limit: 100)
        try outbox.failed(id: all[1].id, error: "HTTP 500", nextAttemptAt: .max)  // not due: still read
        try outbox.delivered(ids: [all[4].id])
        var cursor: Int64 = 0
        var read: [OutboxRecord] = []
        while true {
            let step = try outbox.pending(trigger: "a", after: cursor, limit: 2)
            #expect(step.count <= 2)
            guard let last = step.last else { break }
            read += step
            cursor = last.id
        }
        #expect(read.map(\.payload) == [0, 1, 2, 3, 5, 6].map { Self.bytes("a\($0)") })
        #expect(read[1].attempts == 1 && read[1].nextAttemptAt == .max && read[1].lastError == "HTTP 500")
        #expect(try outbox.pending(trigger: "a", after: all[5].id, limit: 10).map(\.id) == [all[6].id])
        #expect(try outbox.pending(trigger: "a", after: all[6].id, limit: 10).isEmpty)
        #expect(try outbox.pending(trigger: "a", after: 0, limit: 0).isEmpty)
        #expect(try outbox.pending(trigger: "c", after: 0, limit: 10).isEmpty)
    }

    /// The backlog bound: the newest events past the oldest `keep` of one trigger move to
    /// the dead letters together, the kept ones and other triggers' events untouched.
    @Test(arguments: ContractEngine.all)
    func theNewestEventsPastABoundMoveToTheDeadLetters(engine: ContractEngine) throws {
        let place = try engine.makePlace()
        let store = try engine.open(place.address, EngineHooks())
        defer { store.close(); _ = place }
        let outbox = store.triggerOutbox
        for n in 0..<7 {
            try store.writeSync(Self.set("/n/\(n)", .int(Int64(n))), check: nil) { _, _ in
                [OutboxEvent(trigger: "a", payload: Self.bytes("a\(n)")), OutboxEvent(trigger: "b", payload: Self.bytes("b\(n)"))]
            }
        }
        let a = try outbox.pending(trigger: "a", now: 0, limit: 100)
        #expect(try outbox.killNewest(trigger: "a", keep: 7, reason: "backlog", at: 5) == 0, "at the bound nothing moves")
        #expect(try outbox.killNewest(trigger: "a", keep: 3, reason: "backlog", at: 5) == 4)
        #expect(try outbox.pending(trigger: "a", now: 0, limit: 100).map(\.id) == a.prefix(3).map(\.id))
        let dead = try outbox.deadLetters(trigger: "a", limit: 100)
        #expect(dead.map(\.record.id) == a.dropFirst(3).map(\.id))
        #expect(dead.allSatisfy { $0.reason == "backlog" && $0.diedAt == 5 })
        #expect(try outbox.pendingCount(trigger: "b") == 7, "another trigger's events stay")
        #expect(try outbox.killNewest(trigger: "none", keep: 1, reason: "backlog", at: 5) == 0)
        #expect(try outbox.resend(ids: dead.map(\.record.id)) == 4)
        #expect(try outbox.pending(trigger: "a", now: 0, limit: 100).map(\.id) == a.map(\.id), "re-sent, in their order")
    }

    /// The byte budget: stored bytes are counted per trigger (pending and dead apart); a
    /// trim deletes the oldest dead letters first, and only when the pending events alone
    /// are past the budget the newest of them (every dead letter going too); the retention
    /// deletes dead letters by the time they died. Other triggers are untouched.
    @Test(arguments: ContractEngine.all)
    func theByteBudgetDropsTheOldestDeadLettersThenTheNewestPending(engine: ContractEngine) throws {
        let place = try engine.makePlace()
        let store = try engine.open(place.address, EngineHooks())
        defer { store.close(); _ = place }
        let outbox = store.triggerOutbox
        // Six events of "a" of 100 bytes each, one of "b" of 7.
        for n in 0..<6 {
            try store.writeSync(Self.set("/n/\(n)", .int(Int64(n))), check: nil) { _, _ in
                [OutboxEvent(trigger: "a", payload: Array(repeating: UInt8(0x30 + n), count: 100))]
                    + (n == 0 ? [OutboxEvent(trigger: "b", payload: Self.bytes("bbbbbbb"))] : [])
            }
        }
        let a = try outbox.pending(trigger: "a", now: 0, limit: 100)
        #expect(try outbox.storedBytes(trigger: nil) == ["a": OutboxBytes(pending: 600), "b": OutboxBytes(pending: 7)])
        #expect(try outbox.storedBytes(trigger: "b") == ["b": OutboxBytes(pending: 7)])
        #expect(try outbox.storedBytes(trigger: "none").isEmpty)
        // Four die (at 10, 20, 30, 40): 200 pending, 400 dead.
        for (index, record) in a.prefix(4).enumerated() { try outbox.kill(id: record.id, reason: "x", at: Int64(10 * (index + 1))) }
        #expect(try outbox.storedBytes(trigger: "a")["a"] == OutboxBytes(pending: 200, dead: 400))

        #expect(try outbox.trim(trigger: "a", maxBytes: 600) == OutboxTrim(), "at the budget nothing goes")
        // 450: the pending 200 leave 250, so the two newest dead letters stay (200), the two oldest go.
        #expect(try outbox.trim(trigger: "a", maxBytes: 450) == OutboxTrim(deadRemoved: 2))
        #expect(try outbox.deadLetters(trigger: "a", limit: 100).map(\.record.id) == [a[2].id, a[3].id])
        #expect(try outbox.pending(trigger: "a", now: 0, limit: 100).map(\.id) == [a[4].id, a[5].id])
        // 150: the pending alone are past it: the newest pending goes, and every dead letter.
        #expect(try outbox.trim(trigger: "a", maxBytes: 150) == OutboxTrim(deadRemoved: 2, pendingDropped: 1))
        #expect(try outbox.pending(trigger: "a", now: 0, limit: 100).map(\.id) == [a[4].id])
        #expect(try outbox.deadLetters(trigger: "a", limit: 100).isEmpty)
        // A budget smaller than the oldest pending event: it goes too.
        #expect(try outbox.trim(trigger: "a", maxBytes: 99) == OutboxTrim(pendingDropped: 1))
        #expect(try outbox.storedBytes(trigger: nil) == ["b": OutboxBytes(pending: 7)], "another trigger's events stay")

        // Retention: dead letters that died before the cut go, whichever trigger's.
        let b = try outbox.pending(trigger: "b", now: 0, limit: 1)
        try outbox.kill(id: b[0].id, reason: "x", at: 1_000)
        for n in 0..<3 {
            try store.writeSync(Self.set("/m/\(n)", .int(Int64(n))), check: nil) { _, _ in [OutboxEvent(trigger: "a", payload: [1])] }
        }
        let more = try outbox.pending(trigger: "a", now: 0, limit: 100)
        for (index, record) in more.enumerated() { try outbox.kill(id: record.id, reason: "x", at: Int64(2_000 + index)) }
        #expect(try outbox.pruneDeadLetters(diedBefore: 1_000) == [:])
        #expect(try outbox.pruneDeadLetters(diedBefore: 2_001) == ["a": 1, "b": 1])
        #expect(try outbox.deadLetters(trigger: nil, limit: 100).map(\.record.id) == [more[1].id, more[2].id])
    }

    @Test(arguments: ContractEngine.all)
    func eventsAndDeadLettersSurviveClosingAndReopening(engine: ContractEngine) throws {
        let place = try engine.makePlace()
        let first = try engine.open(place.address, EngineHooks())
        var ids: [Int64] = []
        for n in 0..<3 {
            try first.writeSync(Self.set("/k/\(n)", .int(Int64(n))), check: nil) { _, _ in [OutboxEvent(trigger: "t", payload: [UInt8(n), 0, 255])] }
        }
        ids = try first.triggerOutbox.pending(trigger: "t", now: 0, limit: 10).map(\.id)
        try first.triggerOutbox.kill(id: ids[0], reason: "gone", at: 1)
        first.close()
        let second = try engine.open(place.address, EngineHooks())
        defer { second.close(); _ = place }
        #expect(try second.triggerOutbox.pending(trigger: "t", now: 0, limit: 10).map(\.payload) == [[1, 0, 255], [2, 0, 255]])
        #expect(try second.triggerOutbox.deadLetters(trigger: "t", limit: 10).map(\.record.id) == [ids[0]])
        try second.writeSync(Self.set("/k/3", 3), check: nil) { _, _ in [OutboxEvent(trigger: "t", payload: [3])] }
        #expect(try second.triggerOutbox.pending(trigger: "t", now: 0, limit: 10).last.map { $0.id > ids[2] } == true,
                "ids go on increasing after a reopen")
    }

    /// One delivering node per trigger at a time: on a shared engine a second node is
    /// refused a held lease until it runs out or its holder stops; one node holds them all.
    @Test(arguments: ContractEngine.all)
    func aTriggersLeaseIsHeldByOneNodeAtATime(engine: ContractEngine) throws {
        let place = try engine.makePlace()
        let one = try engine.open(place.address, EngineHooks())
        defer { one.close(); _ = place }
        #expect(try one.triggerOutbox.lease(trigger: "t", seconds: 60))
        #expect(try one.triggerOutbox.lease(trigger: "t", seconds: 60), "renewed by its holder")
        guard one.isShared else { return }
        let two = try engine.open(place.address, EngineHooks())
        defer { two.close() }
        #expect(try !two.triggerOutbox.lease(trigger: "t", seconds: 60))
        #expect(try two.triggerOutbox.lease(trigger: "u", seconds: 0), "another trigger is free")
        // A lease that ran out goes to whichever node asks.
        let deadline = ContinuousClock.now + .seconds(60)
        var taken = false
        while !taken && ContinuousClock.now < deadline {
            taken = try one.triggerOutbox.lease(trigger: "u", seconds: 60)
        }
        #expect(taken, "the expired lease was never taken over")
        #expect(try !two.triggerOutbox.lease(trigger: "u", seconds: 60))
        // A node that stops hands its leases over at once.
        one.close()
        #expect(try two.triggerOutbox.lease(trigger: "t", seconds: 60))
        #expect(try two.triggerOutbox.lease(trigger: "u", seconds: 60))
    }
}
