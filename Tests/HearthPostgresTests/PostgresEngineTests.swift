import Dispatch
import HearthJSON
import HearthStore
import HearthTesting
import Synchronization
import Testing
@testable import HearthPostgres

/// The PostgreSQL engine against a real server (a throwaway cluster, `PostgresCluster`),
/// with two or three engines on one database standing for nodes.
@Suite(.enabled(if: PostgresTests.enabled)) struct PostgresEngineTests {
    static func path(_ text: String) -> DataPath { try! DataPath(string: text) }

    /// Collects what an engine's `onCommit` hears.
    final class Heard: Sendable {
        private let changes = Mutex<[Change]>([])
        private let arrived = DispatchSemaphore(value: 0)
        var all: [Change] { changes.withLock { $0 } }
        var hooks: EngineHooks {
            EngineHooks(onCommit: { batch, _ in
                self.changes.withLock { $0 += batch }
                for _ in batch { self.arrived.signal() }
            })
        }
        /// Waits (bounded) until `count` changes were heard.
        func wait(for count: Int) -> Bool {
            while all.count < count {
                if arrived.wait(timeout: .now() + .seconds(30)) == .timedOut { return false }
            }
            return true
        }
    }

    @Test func theTreeRoundTripsWithPrioritiesRangesAndDeletes() throws {
        let url = try PostgresCluster.shared().makeDatabase()
        let engine = try PostgresEngine(url: url)
        defer { engine.close() }
        let value: JSONValue = ["users": ["alice": ["name": "Alice", "age": 30, "score": 1.5, "ok": true, "note": "ünï\"{,}\\"],
                                          "bob": ["name": "Bob"]], "users0": "sibling", "usersa": 1]
        try engine.writeSync(.set(WriteEntry(path: .root, value: value)), check: nil)
        #expect(try engine.readSync { try $0.value(at: .root) } == value)
        #expect(try engine.readSync { try $0.value(at: Self.path("/users/alice/note")) } == "ünï\"{,}\\")
        #expect(try engine.readSync { try Set($0.childKeys(at: Self.path("/users"))) } == ["alice", "bob"])
        #expect(try engine.readSync { try $0.exists(at: Self.path("/users/bob")) })
        // A write below a leaf replaces it; a delete of the last child removes the parent.
        try engine.writeSync(.set(WriteEntry(path: Self.path("/users0/x"), value: 1)), check: nil)
        #expect(try engine.readSync { try $0.value(at: Self.path("/users0")) } == ["x": 1])
        try engine.writeSync(.update(base: Self.path("/users"), entries: [
            WriteEntry(path: Self.path("/users/bob"), value: nil),
            WriteEntry(path: Self.path("/users/carol"), value: [".value": "C", ".priority": 3]),
        ]), check: nil)
        #expect(try engine.readSync { try Set($0.childKeys(at: Self.path("/users"))) } == ["alice", "carol"])
        #expect(try engine.readSync { try $0.exportValue(at: Self.path("/users/carol")) } == [".value": "C", ".priority": 3])
        let changes = try engine.changes(after: 0, limit: 10)
        #expect(changes.changes.map(\.seq) == [1, 2, 3])
        #expect(changes.oldestSeq == 1)
    }

    @Test func aWriteOnOneEngineReachesTheOthersInOrder() throws {
        let url = try PostgresCluster.shared().makeDatabase()
        let heard = (0..<3).map { _ in Heard() }
        let engines = try heard.map { try PostgresEngine(url: url, hooks: $0.hooks) }
        defer { for engine in engines { engine.close() } }
        let group = DispatchGroup()
        for (index, engine) in engines.enumerated() {
            DispatchQueue.global().async(group: group) {
                for i in 0..<20 { _ = try? engine.writeSync(.set(WriteEntry(path: Self.path("/n\(index)/\(i)"), value: .int(Int64(i)))), check: nil) }
            }
        }
        group.wait()
        for listener in heard { #expect(listener.wait(for: 60)) }
        let orders = heard.map { $0.all.map(\.seq) }
        #expect(orders[0] == Array(1...60))
        #expect(orders[1] == orders[0])
        #expect(orders[2] == orders[0])
        #expect(heard[0].all.map(\.path) == heard[2].all.map(\.path))
    }

    /// A check that reads and writes (a transaction) from three engines at once: no
    /// increment is lost, because each check reads the latest committed value.
    @Test func transactionsFromSeveralEnginesKeepAnExactCounter() throws {
        let url = try PostgresCluster.shared().makeDatabase()
        let engines = try (0..<3).map { _ in try PostgresEngine(url: url) }
        defer { for engine in engines { engine.close() } }
        let counter = Self.path("/counter")
        let group = DispatchGroup()
        let failures = Atomic<Int>(0)
        struct Stale: Error {}
        for engine in engines {
            for _ in 0..<2 {
                DispatchQueue.global().async(group: group) {
                    for _ in 0..<25 {
                        // Read outside, then compare-and-set inside the writer's transaction.
                        while true {
                            let seen = (try? engine.readSync { try $0.value(at: counter) }) ?? .null
                            let next: JSONValue = .int((seen == .null ? 0 : { if case .int(let n) = seen { return n } else { return 0 } }()) + 1)
                            do {
                                try engine.writeSync(.set(WriteEntry(path: counter, value: next)), check: { view, _ in
                                    if try view.value(at: counter) != seen { throw Stale() }
                                })
                                break
                            } catch WriteFailure.rejected {
                                continue
                            } catch {
                                failures.add(1, ordering: .relaxed)
                                break
                            }
                        }
                    }
                }
            }
        }
        group.wait()
        #expect(failures.load(ordering: .relaxed) == 0)
        #expect(try engines[1].readSync { try $0.value(at: counter) } == 150)
    }

    @Test func schemaMigratesOnceWhenNodesStartTogether() throws {
        let url = try PostgresCluster.shared().makeDatabase()
        let opened = Mutex<[PostgresEngine]>([])
        let errors = Mutex<[String]>([])
        let group = DispatchGroup()
        for _ in 0..<3 {
            DispatchQueue.global().async(group: group) {
                do {
                    let engine = try PostgresEngine(url: url)
                    opened.withLock { $0.append(engine) }
                } catch {
                    errors.withLock { $0.append("\(error)") }
                }
            }
        }
        group.wait()
        #expect(errors.withLock { $0 }.isEmpty, "\(errors.withLock { $0 })")
        let engines = opened.withLock { $0 }
        #expect(engines.count == 3)
        for engine in engines { engine.close() }
    }

    @Test func accountsAreSharedAndARefreshTokenRotatesOnceAcrossEngines() throws {
        let url = try PostgresCluster.shared().makeDatabase()
        let a = try PostgresEngine(url: url), b = try PostgresEngine(url: url)
        defer { a.close(); b.close() }
        let alice = UserRecord(uid: "alice", email: "alice@example.com", provider: .password, createdAt: 1, validSince: 0)
        try a.accountStore.insert(alice)
        #expect(throws: AccountStoreError.duplicateUID) { try b.accountStore.insert(alice) }
        #expect(throws: AccountStoreError.duplicateEmail) {
            try b.accountStore.insert(UserRecord(uid: "other", email: "alice@example.com", provider: .password, createdAt: 1, validSince: 0))
        }
        #expect(try b.accountStore.user(email: "alice@example.com")?.uid == "alice")
        try a.accountStore.addRefreshToken(hash: "h0", uid: "alice", family: "f", at: 10)
        // The same token presented to both engines at once: one rotation, one replay.
        let outcomes = Mutex<[RefreshOutcome]>([])
        let group = DispatchGroup()
        for (engine, next) in [(a, "h1"), (b, "h2")] {
            DispatchQueue.global().async(group: group) {
                if let outcome = try? engine.accountStore.rotateRefreshToken(hash: "h0", newHash: next, at: 20) {
                    outcomes.withLock { $0.append(outcome) }
                }
            }
        }
        group.wait()
        let all = outcomes.withLock { $0 }
        #expect(all.count == 2)
        #expect(all.filter { if case .rotated = $0 { return true } else { return false } }.count == 1)
        #expect(all.filter { if case .reused = $0 { return true } else { return false } }.count == 1)
    }

    @Test func aKeyRotatedOnOneEngineIsSeenByTheOther() throws {
        let url = try PostgresCluster.shared().makeDatabase()
        let a = try PostgresEngine(url: url), b = try PostgresEngine(url: url)
        defer { a.close(); b.close() }
        #expect(try a.signingKeys.load() == nil)
        try a.signingKeys.add(kid: "k1", privateKey: "AAAA")
        try a.signingKeys.add(kid: "k2", privateKey: "BBBB")
        #expect(b.signingKeys.contains(kid: "k2"))
        #expect(!b.signingKeys.contains(kid: "k3"))
        #expect(try b.signingKeys.load() == StoredSigningKeys(current: "k2", keys: ["k1": "AAAA", "k2": "BBBB"]))
    }

    /// A node that cannot renew its lease (cut off from the database, or paused) gives it
    /// up `leaseSafetyMarginMilliseconds` before it runs out: it tells its server once,
    /// takes a new id and refuses new records until it holds a lease again. Other nodes
    /// take its records only once the old lease ran out, after the fence.
    @Test func aNodeThatCannotRenewItsLeaseFencesItselfBeforeOthersTakeItsRecords() throws {
        let url = try PostgresCluster.shared().makeDatabase()
        let now = Atomic<Int64>(1_000_000)
        let clock: @Sendable () -> Int64 = { now.load(ordering: .relaxed) }
        let lost = Atomic<Int>(0)
        let cut = try PostgresEngine(url: url, clock: clock, hooks: EngineHooks(onLeaseLost: { lost.add(1, ordering: .relaxed) }), leaseTimeFromDatabase: false)
        let other = try PostgresEngine(url: url, clock: clock, leaseTimeFromDatabase: false)
        defer { cut.close(); other.close() }
        cut.stopLeaseForTesting()  // its renewals stop reaching the database
        let firstID = cut.nodeID
        try cut.onDisconnectRecords.add(OnDisconnectRecord(session: "s1", position: 0, operation: "{}", caller: "{}"))
        let fenceAt = PostgresEngine.leaseMilliseconds - PostgresEngine.leaseSafetyMarginMilliseconds
        now.add(fenceAt - 1, ordering: .relaxed)
        #expect(!cut.checkLeaseForTesting())
        #expect(cut.holdsLease)
        now.add(1, ordering: .relaxed)
        #expect(cut.checkLeaseForTesting())
        #expect(!cut.checkLeaseForTesting(), "told once, not at every tick")
        #expect(lost.load(ordering: .relaxed) == 1)
        #expect(cut.nodeID != firstID)
        #expect(!cut.holdsLease)
        #expect(throws: StoreError.self) {
            try cut.onDisconnectRecords.add(OnDisconnectRecord(session: "s2", position: 0, operation: "{}", caller: "{}"))
        }
        // The old lease has not run out yet: its records are nobody's to take.
        try other.renewLeaseForTesting()
        #expect(try other.onDisconnectRecords.orphans(after: nil, bytes: 1 << 20).isEmpty)
        now.add(PostgresEngine.leaseSafetyMarginMilliseconds + 1, ordering: .relaxed)
        try other.renewLeaseForTesting()
        #expect(try other.onDisconnectRecords.orphans(after: nil, bytes: 1 << 20).map(\.session) == ["s1"])
        // Back in touch: a lease under the new id, and records again.
        try cut.renewLeaseForTesting()
        #expect(cut.holdsLease)
        try cut.onDisconnectRecords.add(OnDisconnectRecord(session: "s3", position: 0, operation: "{}", caller: "{}"))
        #expect(try other.onDisconnectRecords.orphans(after: nil, bytes: 1 << 20).isEmpty)
        #expect(lost.load(ordering: .relaxed) == 1)
    }

    /// The fence inside the writer's transaction (`WriteFence`): a write fenced on a lease
    /// the database does not hold live (a stale epoch) is refused and changes nothing; an
    /// onDisconnect record is written once, by the node that holds it: after another node
    /// claimed it, the first node's fenced write is refused, the claimer's goes through and
    /// consumes the record, so a second try by either is refused.
    @Test func aWriteFencedOnAStaleLeaseOrARecordItNoLongerHoldsIsRefused() throws {
        let url = try PostgresCluster.shared().makeDatabase()
        let a = try PostgresEngine(url: url), b = try PostgresEngine(url: url)
        defer { a.close(); b.close() }
        struct Fenced: Error {}
        func write(_ engine: PostgresEngine, _ path: String, _ fence: WriteFence) throws(WriteFailure) {
            try engine.writeSync(.set(WriteEntry(path: Self.path(path), value: true)), check: { view, _ in
                guard try view.holds(fence) else { throw Fenced() }
            })
        }
        func refused(_ body: () throws -> Void) -> Bool {
            do { try body() } catch WriteFailure.rejected(let error) { return error is Fenced } catch { return false }
            return false
        }
        #expect(refused { try write(a, "/stale", WriteFence(epoch: PostgresEngine.randomID())) }, "an epoch no lease row carries")
        #expect(try a.readSync { try $0.value(at: Self.path("/stale")) } == .null)
        try write(a, "/live", WriteFence(epoch: a.nodeID))
        try write(a, "/current", WriteFence(epoch: nil))

        try a.onDisconnectRecords.add(OnDisconnectRecord(session: "s", position: 0, operation: "{}", caller: "{}"))
        #expect(try b.onDisconnectRecords.claim(session: "s").map(\.session) == ["s"])
        #expect(refused { try write(a, "/ghost", WriteFence(epoch: nil, session: "s", position: 0)) }, "claimed by b")
        try write(b, "/ran", WriteFence(epoch: nil, session: "s", position: 0))
        #expect(refused { try write(b, "/twice", WriteFence(epoch: nil, session: "s", position: 0)) }, "consumed")
        #expect(try a.readSync { try $0.value(at: .root) } == ["live": true, "current": true, "ran": true])
        // A node's records are not removed by another node's removeAll.
        try a.onDisconnectRecords.add(OnDisconnectRecord(session: "t", position: 0, operation: "{}", caller: "{}"))
        try b.onDisconnectRecords.removeAll(session: "t")
        #expect(refused { try write(b, "/t", WriteFence(epoch: nil, session: "t", position: 0)) })
        try write(a, "/t", WriteFence(epoch: nil, session: "t", position: 0))
    }

    /// Leases are stored and judged on the database's clock: a node whose own clock is
    /// decades behind still holds a live lease (its row ends a lease's length after the
    /// database's now), so a node with a right clock does not take its records.
    @Test func leasesAreOnTheDatabasesClock() throws {
        let url = try PostgresCluster.shared().makeDatabase()
        let skewed = try PostgresEngine(url: url, clock: { 1_000_000 })
        let other = try PostgresEngine(url: url)
        defer { skewed.close(); other.close() }
        try skewed.onDisconnectRecords.add(OnDisconnectRecord(session: "s", position: 0, operation: "{}", caller: "{}"))
        #expect(try other.onDisconnectRecords.orphans(after: nil, bytes: 1 << 20).isEmpty, "its lease is live by the database's clock")
        let left = try PGConnection(url: url).query("SELECT lease_until - \(NodeLease.databaseNow) FROM hearth_nodes WHERE id = $1",
                                                    [.text(skewed.nodeID)]).int64(0, 0)
        #expect(left > 0 && left <= PostgresEngine.leaseMilliseconds, "\(left)")
    }

    /// A lease another node took over is never extended again: the renewal finds its row
    /// gone, and the node fences itself at once (a new id, `onLeaseLost`).
    @Test func aLeaseTakenOverIsNotRenewedButGivenUp() throws {
        let url = try PostgresCluster.shared().makeDatabase()
        let now = Atomic<Int64>(1_000_000)
        let clock: @Sendable () -> Int64 = { now.load(ordering: .relaxed) }
        let lost = Atomic<Int>(0)
        let paused = try PostgresEngine(url: url, clock: clock, hooks: EngineHooks(onLeaseLost: { lost.add(1, ordering: .relaxed) }), leaseTimeFromDatabase: false)
        let other = try PostgresEngine(url: url, clock: clock, leaseTimeFromDatabase: false)
        defer { paused.close(); other.close() }
        paused.stopLeaseForTesting()
        let firstID = paused.nodeID
        try paused.onDisconnectRecords.add(OnDisconnectRecord(session: "s1", position: 0, operation: "{}", caller: "{}"))
        // Paused past its lease without its fence check running (SIGSTOP): the other node
        // takes the records and the lease's row.
        now.add(PostgresEngine.leaseMilliseconds - 1, ordering: .relaxed)
        try other.renewLeaseForTesting()
        now.add(2, ordering: .relaxed)
        #expect(try other.onDisconnectRecords.orphans(after: nil, bytes: 1 << 20).map(\.session) == ["s1"])
        // It wakes, and its renewal comes first.
        try paused.renewLeaseForTesting()
        #expect(lost.load(ordering: .relaxed) == 1)
        #expect(paused.nodeID != firstID)
        #expect(try PGConnection(url: url).query("SELECT 1 FROM hearth_nodes WHERE id = $1", [.text(firstID)]).rowCount == 0)
        #expect(throws: WriteFailure.self) { try paused.writeSync(.set(WriteEntry(path: Self.path("/after"), value: 1))) }
        try paused.renewLeaseForTesting()
        try paused.writeSync(.set(WriteEntry(path: Self.path("/after"), value: 1)))
    }

    /// A write ("/lost", after "/before" committed) whose writer session another session
    /// ends just before its COMMIT (as when the network drops it), once `first` ran as the
    /// superuser with the database's name. With `reading`, the write's check reads the tree,
    /// so the batch is judged inside its transaction and the session ends between its
    /// opening exchange and its closing one; without, the batch is sent whole, and the
    /// session ends before that one exchange. The engine, the write's failure (nil if it
    /// succeeded), the database's name.
    static func loseACommit(reading: Bool, first: @escaping @Sendable (PostgresCluster, String) -> Void = { _, _ in })
        throws -> (engine: PostgresEngine, failure: WriteFailure?, name: String) {
        let cluster = try PostgresCluster.shared()
        let url = try cluster.makeDatabase()
        let name = String(url.split(separator: "/").last ?? "")
        let dropNext = Atomic<Bool>(false), session = Atomic<Int64>(0)
        let engine = try PostgresEngine(url: url, options: StoreOptions(), clock: WallClock.milliseconds, hooks: EngineHooks()) {
            guard dropNext.exchange(false, ordering: .relaxed) else { return }
            first(cluster, name)
            // The writer's session (idle in the batch's transaction, after its opening
            // statements, or idle before a batch sent whole); the termination waits until
            // it is gone.
            try? cluster.sql("SELECT pg_terminate_backend(\(session.load(ordering: .relaxed)), 10000)")
        }
        try engine.writeSync(.set(WriteEntry(path: Self.path("/before"), value: 1)), check: nil)
        session.store(try engine.writerSessionForTesting(), ordering: .relaxed)
        dropNext.store(true, ordering: .relaxed)
        var failure: WriteFailure?
        do {
            try engine.writeSync(.set(WriteEntry(path: Self.path("/lost"), value: 2)), check: reading ? WriteChecks.readsTheTree : nil)
        } catch {
            failure = error
        }
        let dropped = !dropNext.load(ordering: .relaxed)
        #expect(dropped, "the hook ran at the commit")
        return (engine, failure, name)
    }

    /// The writer's session ends just before its COMMIT: the engine asks the database on a
    /// new session whether the batch committed. Here it did not, so the write fails saying
    /// nothing was written (not "outcome unknown"), and nothing was.
    @Test(arguments: [true, false])
    func aBatchWhoseConnectionDroppedBeforeItsCommitIsReportedAsNotWritten(reading: Bool) throws {
        let (engine, failure, _) = try Self.loseACommit(reading: reading)
        defer { engine.close() }
        guard case .store(let store)? = failure else { Issue.record("not a plain store failure: \(String(describing: failure))"); return }
        #expect("\(store)".contains("the database says the batch did not commit; nothing was written"))
        #expect(engine.lostCommitsResolved.load(ordering: .relaxed) == 0)
        #expect(try engine.readSync { try $0.value(at: Self.path("/lost")) } == .null)
        // The writer is back on a new session.
        try engine.writeSync(.set(WriteEntry(path: Self.path("/after"), value: 3)), check: nil)
        #expect(try engine.readSync { try $0.value(at: .root) } == ["before": 1, "after": 3])
        #expect(try engine.changes(after: 0, limit: 10).changes.map(\.seq) == [1, 2])
    }

    /// As above, but the database refuses new sessions from then on, so the engine cannot
    /// ask whether the batch committed: the write fails as "outcome unknown", never as
    /// "nothing was written" (which a client may retry).
    @Test(arguments: [true, false])
    func aLostCommitThatCannotBeLookedUpIsReportedAsOutcomeUnknown(reading: Bool) throws {
        let (engine, failure, name) = try Self.loseACommit(reading: reading) { cluster, name in
            try? cluster.sql("ALTER DATABASE \(name) ALLOW_CONNECTIONS false")
        }
        defer { engine.close() }
        guard case .outcomeUnknown(let store)? = failure else { Issue.record("not outcome unknown: \(String(describing: failure))"); return }
        #expect("\(store)".contains("whether the batch committed is unknown"))
        try PostgresCluster.shared().sql("ALTER DATABASE \(name) ALLOW_CONNECTIONS true")
        // It had not committed (its session ended before the COMMIT); the writer is back.
        try engine.writeSync(.set(WriteEntry(path: Self.path("/after"), value: 3)), check: nil)
        #expect(try engine.readSync { try $0.value(at: .root) } == ["before": 1, "after": 3])
    }

    /// Marks are kept `batchMarkMilliseconds` after a node's last batch; the change-log trim
    /// removes older ones (nodes long gone), never a recent one.
    @Test func batchMarksOlderThanTheirRetentionAreTrimmed() throws {
        let url = try PostgresCluster.shared().makeDatabase()
        let now = Atomic<Int64>(1_000_000_000)
        let engine = try PostgresEngine(url: url, clock: { now.load(ordering: .relaxed) })
        defer { engine.close() }
        try engine.writeSync(.set(WriteEntry(path: Self.path("/a"), value: 1)), check: nil)
        let marks = { try PGConnection(url: url).query("SELECT count(*) FROM hearth_batches").int64(0, 0) }
        now.add(PostgresEngine.batchMarkMilliseconds, ordering: .relaxed)
        engine.trimChangeLog()
        #expect(try marks() == 1, "exactly the retention: kept")
        now.add(1, ordering: .relaxed)
        engine.trimChangeLog()
        #expect(try marks() == 0)
    }

    /// Every committed batch leaves its mark, so a node that lost the answer to its COMMIT
    /// learns that it committed (and acknowledges its writes) rather than failing them.
    @Test func aCommittedBatchsMarkSaysItCommitted() throws {
        let url = try PostgresCluster.shared().makeDatabase()
        let engine = try PostgresEngine(url: url)
        defer { engine.close() }
        try engine.writeSync(.set(WriteEntry(path: Self.path("/a"), value: 1)), check: nil)
        let mark = try PGConnection(url: url).query("SELECT node, token FROM hearth_batches")
        #expect(mark.rowCount == 1)
        #expect(mark.text(0, 0) == engine.nodeID)
        #expect(engine.outcomeOfLostCommitForTesting(node: mark.text(0, 0), token: mark.text(0, 1)) == .committed(last: 1, base: 0))
        #expect(engine.outcomeOfLostCommitForTesting(node: mark.text(0, 0), token: "another batch") == .notCommitted)
        #expect(engine.outcomeOfLostCommitForTesting(node: "another node", token: mark.text(0, 1)) == .notCommitted)
    }
}
