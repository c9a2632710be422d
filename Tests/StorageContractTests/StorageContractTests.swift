import Dispatch
import HearthJSON
import HearthStore
import Synchronization
import Testing

/// The storage contract (docs/architecture.md), checked the same way on every engine in
/// `ContractEngine.all`: what the layers above the seam rely on whichever engine runs.
@Suite struct StorageContractTests {
    static func path(_ text: String) -> DataPath { try! DataPath(string: text) }

    /// What an engine's `onCommit` heard, in the order it heard it, and what its
    /// `onDurable` heard (each seq, and whether `onCommit` had heard it first).
    final class Heard: Sendable {
        private let changes = Mutex<[Change]>([])
        private let durable = Mutex<[(seq: Int64, committedFirst: Bool)]>([])
        private let arrived = DispatchSemaphore(value: 0)
        var all: [Change] { changes.withLock { $0 } }
        var allDurable: [(seq: Int64, committedFirst: Bool)] { durable.withLock { $0 } }
        var hooks: EngineHooks {
            EngineHooks(onCommit: { batch, _ in
                self.changes.withLock { $0 += batch }
                for _ in batch { self.arrived.signal() }
            }, onDurable: { batch in
                let heard = batch.map { change in (change.seq, self.contains(seq: change.seq)) }
                self.durable.withLock { $0 += heard }
            })
        }
        func contains(seq: Int64) -> Bool { changes.withLock { $0.contains { $0.seq == seq } } }
        /// Waits until `count` changes were heard (false after 30 s without one).
        func wait(for count: Int) -> Bool {
            while all.count < count {
                if arrived.wait(timeout: .now() + .seconds(30)) == .timedOut { return false }
            }
            return true
        }
    }

    struct Refused: Error {}

    /// A fresh place, the engine open on it, and what its `onCommit` hears.
    static func fresh(_ engine: ContractEngine) throws -> (Place, Heard, any StorageEngine) {
        let place = try engine.makePlace()
        let heard = Heard()
        return (place, heard, try engine.open(place.address, heard.hooks))
    }

    @Test(arguments: ContractEngine.all)
    func onCommitHearsAWriteBeforeItIsAcknowledged(engine: ContractEngine) throws {
        let (place, heard, store) = try Self.fresh(engine)
        defer { store.close(); _ = place }
        for n in 0..<5 {
            let outcome = try store.writeSync(.set(WriteEntry(path: Self.path("/n/\(n)"), value: .int(Int64(n)))), check: nil)
            #expect(heard.contains(seq: outcome.seq), "change \(outcome.seq) acknowledged before onCommit heard it")
        }
        // The asynchronous acknowledgement too: the completion runs after onCommit.
        let acknowledged = DispatchSemaphore(value: 0)
        let heardFirst = Mutex(false)
        store.write(.set(WriteEntry(path: Self.path("/async"), value: true)), check: nil) { result in
            if case .success(let outcome) = result { heardFirst.withLock { $0 = heard.contains(seq: outcome.seq) } }
            acknowledged.signal()
        }
        #expect(acknowledged.wait(timeout: .now() + .seconds(30)) == .success)
        #expect(heardFirst.withLock { $0 })
    }

    /// `onDurable` hears every change after `onCommit` and before its write is
    /// acknowledged, in commit order (what triggers wait for).
    @Test(arguments: ContractEngine.all)
    func onDurableHearsEveryChangeAfterOnCommitAndBeforeItsAcknowledgement(engine: ContractEngine) throws {
        let (place, heard, store) = try Self.fresh(engine)
        defer { store.close(); _ = place }
        var acknowledged: [Int64] = []
        for n in 0..<5 {
            let outcome = try store.writeSync(.set(WriteEntry(path: Self.path("/d/\(n)"), value: .int(Int64(n)))), check: nil)
            #expect(heard.allDurable.contains { $0.seq == outcome.seq }, "change \(outcome.seq) acknowledged before onDurable heard it")
            acknowledged.append(outcome.seq)
        }
        let durable = heard.allDurable
        #expect(durable.map(\.seq) == acknowledged)
        let inOrder = durable.allSatisfy { $0.committedFirst }
        #expect(inOrder, "onDurable heard a change before onCommit did")
    }

    @Test(arguments: ContractEngine.all)
    func changeNumbersFollowCommitOrderAndTheFeedAgrees(engine: ContractEngine) throws {
        let (place, heard, store) = try Self.fresh(engine)
        defer { store.close(); _ = place }
        let writes = 40
        let done = DispatchGroup()
        let outcomes = Mutex<[Int64]>([])
        DispatchQueue.concurrentPerform(iterations: writes) { n in
            done.enter()
            store.write(.set(WriteEntry(path: Self.path("/w/\(n)"), value: .int(Int64(n)))), check: nil) { result in
                if case .success(let outcome) = result { outcomes.withLock { $0.append(outcome.seq) } }
                done.leave()
            }
        }
        #expect(done.wait(timeout: .now() + .seconds(60)) == .success)
        let seqs = heard.all.map(\.seq)
        #expect(seqs.count == writes)
        #expect(zip(seqs, seqs.dropFirst()).allSatisfy { $0 < $1 }, "onCommit out of commit order: \(seqs)")
        #expect(Set(outcomes.withLock { $0 }) == Set(seqs))
        let feed = try store.changes(after: 0, limit: 1000).changes
        #expect(feed.map(\.seq) == seqs)
        #expect(feed.map(\.path) == heard.all.map(\.path))
    }

    @Test(arguments: ContractEngine.all)
    func aMultiPathUpdateIsOneChangeAndARejectedWriteLeavesNothing(engine: ContractEngine) throws {
        let (place, heard, store) = try Self.fresh(engine)
        defer { store.close(); _ = place }
        try store.writeSync(.set(WriteEntry(path: Self.path("/a"), value: ["x": 1, "y": 2])), check: nil)
        let update = try store.writeSync(.update(base: Self.path("/a"), entries: [
            WriteEntry(path: Self.path("/a/x"), value: 10),
            WriteEntry(path: Self.path("/a/y"), value: nil),
            WriteEntry(path: Self.path("/a/z/deep"), value: "new"),
        ]), check: nil)
        #expect(heard.all.filter { $0.seq == update.seq }.count == 1)
        #expect(heard.all.last?.kind == .patch)
        #expect(try store.readSync { try $0.value(at: Self.path("/a")) } == ["x": 10, "z": ["deep": "new"]])
        // A write whose check throws commits nothing; writes batched with it still commit.
        let before = heard.all.count
        let done = DispatchGroup()
        let results = Mutex<[String: Bool]>([:])
        for (key, refuse) in [("ok1", false), ("refused", true), ("ok2", false)] {
            done.enter()
            store.write(.update(base: .root, entries: [WriteEntry(path: Self.path("/b/\(key)"), value: 1),
                                                       WriteEntry(path: Self.path("/a/x"), value: refuse ? 99 : 10)]),
                        check: { _, _ in if refuse { throw Refused() } }) { result in
                results.withLock { $0[key] = (try? result.get()) != nil }
                done.leave()
            }
        }
        #expect(done.wait(timeout: .now() + .seconds(30)) == .success)
        #expect(results.withLock { $0 } == ["ok1": true, "refused": false, "ok2": true])
        #expect(try store.readSync { try $0.value(at: Self.path("/b")) } == ["ok1": 1, "ok2": 1])
        #expect(try store.readSync { try $0.value(at: Self.path("/a/x")) } == 10)
        #expect(heard.all.count == before + 2)
    }

    @Test(arguments: ContractEngine.all)
    func anAcknowledgedWriteSurvivesClosingAndReopening(engine: ContractEngine) throws {
        let place = try engine.makePlace()
        let first = try engine.open(place.address, EngineHooks())
        let outcome = try first.writeSync(.set(WriteEntry(path: Self.path("/kept"), value: ["v": 1])), check: nil)
        first.close()
        let heard = Heard()
        let second = try engine.open(place.address, heard.hooks)
        defer { second.close() }
        #expect(try second.readSync { try $0.value(at: Self.path("/kept")) } == ["v": 1])
        #expect(try second.changes(after: 0, limit: 10).changes.map(\.seq).contains(outcome.seq))
        let next = try second.writeSync(.set(WriteEntry(path: Self.path("/later"), value: 2)), check: nil)
        #expect(next.seq > outcome.seq, "change numbers go on after a reopen")
        #expect(heard.contains(seq: next.seq))
    }
}
