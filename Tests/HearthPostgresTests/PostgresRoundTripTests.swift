import HearthJSON
import HearthStore
import HearthTesting
import Synchronization
import Testing
@testable import HearthPostgres

/// How many exchanges with the server a write batch costs, and what the batch's answer is
/// when a statement sent together with its COMMIT fails.
@Suite(.enabled(if: PostgresTests.enabled)) struct PostgresRoundTripTests {
    static func path(_ text: String) -> DataPath { try! DataPath(string: text) }

    /// A batch of plain writes (no check reading the tree, no trigger, no watched location,
    /// no query index) costs three round trips on the writer's connection: BEGIN with the
    /// ordering lock and the index version; the writes; the mark, NOTIFY and COMMIT. A batch
    /// whose writes were all refused costs two (nothing to send but the COMMIT).
    @Test func aBatchOfPlainWritesTakesThreeRoundTrips() throws {
        let engine = try PostgresEngine(url: try PostgresCluster.shared().makeDatabase())
        defer { engine.close() }
        // The first write prepares the batch statement (one more exchange, once per session).
        try engine.writeSync(.set(WriteEntry(path: Self.path("/warm"), value: 0)), check: nil)
        for i in 1...3 {
            let before = engine.writerExchangesForTesting()
            try engine.writeSync(.set(WriteEntry(path: Self.path("/w/\(i)"), value: .int(Int64(i)))), check: nil)
            #expect(engine.writerExchangesForTesting() - before == 3)
        }
        struct Refused: Error {}
        let before = engine.writerExchangesForTesting()
        #expect(throws: WriteFailure.self) {
            try engine.writeSync(.set(WriteEntry(path: Self.path("/no"), value: 1)), check: { _, _ in throw Refused() })
        }
        #expect(engine.writerExchangesForTesting() - before == 2)
        #expect(try engine.readSync { try $0.value(at: .root) } == ["warm": 0, "w": ["1": 1, "2": 2, "3": 3]])
        #expect(try engine.changes(after: 0, limit: 10).changes.map(\.seq) == [1, 2, 3, 4])
    }

    /// The server refuses the mark, sent in one exchange with the NOTIFY and the COMMIT (a
    /// check constraint added just before it): it ran none after it, so the batch is rolled
    /// back and its write fails with the server's error at once, not through the lost-commit
    /// lookup, and nothing of it is written. The writer goes on on its session.
    @Test func aMarkRefusedBeforeItsCommitRollsTheBatchBackWithoutALookup() throws {
        let url = try PostgresCluster.shared().makeDatabase()
        let refuseNext = Atomic<Bool>(false)
        let engine = try PostgresEngine(url: url, options: StoreOptions(), clock: WallClock.milliseconds, hooks: EngineHooks()) {
            guard refuseNext.exchange(false, ordering: .relaxed) else { return }
            // The node's mark row exists (the first batch's): updating it now fails.
            _ = try? PGConnection(url: url).execute("ALTER TABLE hearth_batches ADD CONSTRAINT test_refuse CHECK (false) NOT VALID")
        }
        defer { engine.close() }
        try engine.writeSync(.set(WriteEntry(path: Self.path("/before"), value: 1)), check: nil)
        refuseNext.store(true, ordering: .relaxed)
        let refused = Result { () throws(WriteFailure) in try engine.writeSync(.set(WriteEntry(path: Self.path("/refused"), value: 2)), check: nil) }
        guard case .failure(.store(let store)) = refused else { Issue.record("not a plain store failure: \(refused)"); return }
        #expect("\(store)".contains("test_refuse"), "\(store)")
        #expect(engine.lostCommitsResolved.load(ordering: .relaxed) == 0)
        try PGConnection(url: url).execute("ALTER TABLE hearth_batches DROP CONSTRAINT test_refuse")
        try engine.writeSync(.set(WriteEntry(path: Self.path("/after"), value: 3)), check: nil)
        #expect(try engine.readSync { try $0.value(at: .root) } == ["before": 1, "after": 3])
        #expect(try engine.changes(after: 0, limit: 10).changes.map(\.seq) == [1, 2])
    }

    /// The feed's read (after a batch of this node's, or a wake-up): the snapshot and the
    /// changes in it in one round trip, then the COMMIT after they were handed on.
    @Test func aFeedReadTakesTwoRoundTrips() throws {
        let url = try PostgresCluster.shared().makeDatabase()
        let engine = try PostgresEngine(url: url)
        defer { engine.close() }
        let heard = Mutex<[Int64]>([])
        // Not started: no listener, only the reads asked for here.
        let feed = try ChangeFeed(url: url, onCommit: { changes, _ in heard.withLock { $0 += changes.map(\.seq) } })
        for seq in 1...3 {
            try engine.writeSync(.set(WriteEntry(path: Self.path("/f/\(seq)"), value: .int(Int64(seq)))), check: nil)
            let before = feed.exchangesForTesting()
            feed.deliver(through: Int64(seq), local: [])
            #expect(feed.exchangesForTesting() - before == 2)
        }
        #expect(heard.withLock { $0 } == [1, 2, 3])
        #expect(feed.deliveredSeq == 3)
    }

    /// A wake-up whose numbers were all delivered already (a node's own batch) needs no
    /// read; a poll (no payload), a newer number or a payload that is not a number does.
    @Test func aWakeUpForChangesDeliveredAlreadyNeedsNoRead() {
        #expect(ChangeFeed.announcesNothingNew(["5"], delivered: 5))
        #expect(ChangeFeed.announcesNothingNew(["3", "5"], delivered: 5))
        #expect(!ChangeFeed.announcesNothingNew(["5", "6"], delivered: 5))
        #expect(!ChangeFeed.announcesNothingNew([], delivered: 5))
        #expect(!ChangeFeed.announcesNothingNew(["x"], delivered: 5))
    }

    /// The mark's values go as parameters, never into its text: a node id, token and
    /// channel with quotes and semicolons are stored and used as they are, and nothing else
    /// runs.
    @Test func theMarkTakesItsValuesAsParameters() throws {
        let url = try PostgresCluster.shared().makeDatabase()
        let engine = try PostgresEngine(url: url)
        engine.close()
        let (connection, listener) = (try PGConnection(url: url), try PGConnection(url: url))
        let channel = "a'b; DROP TABLE changes; --"
        try listener.execute("LISTEN \"a'b; DROP TABLE changes; --\"")
        let node = "n'); DELETE FROM hearth_meta; --"
        try connection.execute("BEGIN")
        let answers = connection.runPipelined([PostgresEngine.mark(last: 7, node: node, token: "t'1", at: 9, channel: channel), .init(sql: "COMMIT")])
        #expect(answers.failure.map { "\($0)" } == nil && answers.results.count == 2)
        #expect(try connection.query("SELECT token, at FROM hearth_batches WHERE node = $1", [.text(node)]).text(0, 0) == "t'1")
        #expect(try connection.query("SELECT value FROM hearth_meta WHERE key = 'last_seq'").int64(0, 0) == 7)
        #expect(try connection.query("SELECT count(*) FROM changes").int64(0, 0) == 0, "the changes table is still there")
        #expect(try listener.waitForNotification(timeoutMilliseconds: 10_000) == ["7"])
    }
}
