import HearthJSON
import HearthStore
import Synchronization
import Testing

/// The contract's node cases: the feed-gap signal, leases and onDisconnect orphans. A
/// shared engine's second node is a second engine on the same place; an engine with one
/// node is the same store throughout and never signals.
extension StorageContractTests {
    /// A node that fell further behind than the change log's window (changes trimmed before
    /// it delivered them) is told which ones it missed, once, and goes on with the rest in
    /// order. An engine with one node delivers every change at its commit: trimming never
    /// makes a gap, and `onFeedGap` is never called.
    @Test(arguments: ContractEngine.all)
    func aNodeBehindTheTrimmedChangeLogIsToldOfTheGap(engine: ContractEngine) throws {
        let place = try engine.makePlace()
        var options = StoreOptions()
        options.changeLogRetention = 5
        let heard = Heard()
        let gaps = Mutex<[ClosedRange<Int64>]>([])
        var hooks = heard.hooks
        hooks.onFeedGap = { first, last in gaps.withLock { $0.append(first...last) } }
        let behind = try engine.open(place.address, hooks, options: options)
        let writer = engine.isShared ? try engine.open(place.address, EngineHooks(), options: options) : behind
        defer { behind.close(); if engine.isShared { writer.close() }; _ = place }
        try writer.writeSync(.set(WriteEntry(path: Self.path("/n/0"), value: 0)), check: nil)
        #expect(heard.wait(for: 1))
        engine.holdFeed(behind, true)
        for i in 1..<20 { try writer.writeSync(.set(WriteEntry(path: Self.path("/n/\(i)"), value: .int(Int64(i)))), check: nil) }
        writer.trimChangeLog()
        let oldest = try #require(try writer.changes(after: 0, limit: 1).oldestSeq)
        #expect(oldest == 20 - 5 + 1)
        engine.holdFeed(behind, false)
        if engine.isShared {
            #expect(gaps.withLock { $0 } == [2...(oldest - 1)])
            #expect(heard.all.map(\.seq) == [1] + Array(oldest...20))
        } else {
            #expect(heard.all.map(\.seq) == Array(1...20))
        }
        // Caught up: nothing more is missed.
        let before = heard.all.count
        try writer.writeSync(.set(WriteEntry(path: Self.path("/n/20"), value: 20)), check: nil)
        #expect(heard.wait(for: before + 1))
        #expect(heard.all.last?.seq == 21)
        #expect(gaps.withLock { $0.count } == (engine.isShared ? 1 : 0))
    }

    /// The onDisconnect records a node leaves when it stops (killed: its lease runs out;
    /// with one node: at the next start) are another node's orphans, every one of them, in
    /// registration order, taken once; a live node's records are nobody's.
    @Test(arguments: ContractEngine.all)
    func theRecordsOfAStoppedNodeAreOrphans(engine: ContractEngine) throws {
        let place = try engine.makePlace()
        let now = Atomic<Int64>(1_000_000)
        let clock: @Sendable () -> Int64 = { now.load(ordering: .relaxed) }
        let dying = try engine.open(place.address, EngineHooks(), clock: clock)
        try dying.onDisconnectRecords.add(OnDisconnectRecord(session: "s1", position: 0, operation: "{}", caller: "{}"))
        try dying.onDisconnectRecords.add(OnDisconnectRecord(session: "s1", position: 1, operation: "{}", caller: "{}"))
        if engine.isShared {
            let other = try engine.open(place.address, EngineHooks(), clock: clock)
            #expect(try other.onDisconnectRecords.orphans(after: nil, bytes: 1 << 20).isEmpty, "a live node's records are nobody's")
            other.close()
        }
        engine.die(dying) { now.add($0, ordering: .relaxed) }
        let next = try engine.open(place.address, EngineHooks(), clock: clock)
        defer { next.close(); dying.close(); _ = place }
        let orphans = try next.onDisconnectRecords.orphans(after: nil, bytes: 1 << 20)
        #expect(orphans.map(\.session) == ["s1", "s1"])
        #expect(orphans.map(\.position) == [0, 1])
        if engine.isShared {
            let third = try engine.open(place.address, EngineHooks(), clock: clock)
            defer { third.close() }
            #expect(try third.onDisconnectRecords.orphans(after: nil, bytes: 1 << 20).isEmpty, "taken by one node only")
        }
    }

    /// A node that cannot renew its lease in time says so once (`onLeaseLost`) and goes on
    /// under a new lease. An engine with one node holds no lease: however far the clock
    /// moves, `onLeaseLost` is never called, and it keeps taking records.
    @Test(arguments: ContractEngine.all)
    func aNodeCutOffFromItsLeaseIsTold(engine: ContractEngine) throws {
        let place = try engine.makePlace()
        let now = Atomic<Int64>(1_000_000)
        let lost = Atomic<Int>(0)
        let store = try engine.open(place.address, EngineHooks(onLeaseLost: { lost.add(1, ordering: .relaxed) }),
                                    clock: { now.load(ordering: .relaxed) })
        defer { store.close(); _ = place }
        engine.cutOff(store) { now.add($0, ordering: .relaxed) }
        #expect(lost.load(ordering: .relaxed) == (engine.isShared ? 1 : 0))
        if !engine.isShared {
            try store.onDisconnectRecords.add(OnDisconnectRecord(session: "s", position: 0, operation: "{}", caller: "{}"))
        }
    }
}
