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
    /// no query index) is sent whole: one round trip on the writer's connection (BEGIN, the
    /// ordering lock, the check that the list of indexes is still empty, the writes, the mark,
    /// the NOTIFY, the COMMIT). A batch whose writes were all refused without reading costs
    /// none. A write whose check reads the tree is judged inside its transaction: BEGIN with
    /// the ordering lock and the index version, the check's read, then the writes with the
    /// mark, the NOTIFY and the COMMIT: three.
    @Test func aBatchOfPlainWritesIsSentWholeInOneRoundTrip() throws {
        let engine = try PostgresEngine(url: try PostgresCluster.shared().makeDatabase())
        defer { engine.close() }
        // The first batches read the list of indexes and prepare the statements (once per session).
        try engine.writeSync(.set(WriteEntry(path: Self.path("/warm"), value: 0)), check: nil)
        try engine.writeSync(.set(WriteEntry(path: Self.path("/warm"), value: 0)), check: nil)
        for i in 1...3 {
            let before = engine.writerExchangesForTesting()
            #expect(try engine.writeSync(.set(WriteEntry(path: Self.path("/w/\(i)"), value: .int(Int64(i)))), check: nil).seq == Int64(i + 2))
            #expect(engine.writerExchangesForTesting() - before == 1)
        }
        struct Refused: Error {}
        var before = engine.writerExchangesForTesting()
        #expect(throws: WriteFailure.self) {
            try engine.writeSync(.set(WriteEntry(path: Self.path("/no"), value: 1)), check: { _, _ in throw Refused() })
        }
        #expect(engine.writerExchangesForTesting() - before == 0)
        try engine.writeSync(.set(WriteEntry(path: Self.path("/read"), value: 1)), check: WriteChecks.readsTheTree)
        before = engine.writerExchangesForTesting()
        #expect(try engine.writeSync(.set(WriteEntry(path: Self.path("/read"), value: 2)), check: WriteChecks.readsTheTree).seq == 7)
        #expect(engine.writerExchangesForTesting() - before == 3)
        #expect(try engine.readSync { try $0.value(at: .root) } == ["warm": 0, "w": ["1": 1, "2": 2, "3": 3], "read": 2])
        #expect(try engine.changes(after: 0, limit: 10).changes.map(\.seq) == [1, 2, 3, 4, 5, 6, 7])
        #expect(try engine.changes(after: 0, limit: 10).changes.map(\.path.description) == ["/warm", "/warm", "/w/1", "/w/2", "/w/3", "/read", "/read"])
    }

    /// A node whose list of query indexes was empty sends plain batches whole, with the check
    /// that the list is still empty. When another node built an index since, that check
    /// fails before the writes run: the batch is rolled back and judged again the ordinary
    /// way, which reads the new list and keeps the index in step, and it commits once. From
    /// then on the node's batches keep the index, so none is sent whole.
    @Test func aBatchSentWholeAfterAnotherNodeBuiltAnIndexIsSentAgainTheOrdinaryWay() throws {
        let url = try PostgresCluster.shared().makeDatabase()
        let a = try PostgresEngine(url: url), b = try PostgresEngine(url: url)
        defer { a.close(); b.close() }
        for i in 1...2 { try a.writeSync(.set(WriteEntry(path: Self.path("/items/k\(i)/score"), value: .int(Int64(i)))), check: nil) }
        var before = a.writerExchangesForTesting()
        try a.writeSync(.set(WriteEntry(path: Self.path("/items/k5/score"), value: 5)), check: nil)
        #expect(a.writerExchangesForTesting() - before == 1, "sent whole")
        b.buildQueryIndex(at: Self.path("/items"), spec: "score")
        before = a.writerExchangesForTesting()
        #expect(try a.writeSync(.set(WriteEntry(path: Self.path("/items/k0/score"), value: 0)), check: nil).seq == 4)
        // Refused (1), rolled back (1), then the ordinary way (2, and the list's read).
        #expect(a.writerExchangesForTesting() - before >= 4)
        #expect(a.lostCommitsResolved.load(ordering: .relaxed) == 0)
        before = a.writerExchangesForTesting()
        #expect(try a.writeSync(.set(WriteEntry(path: Self.path("/items/k3/score"), value: 3)), check: nil).seq == 5)
        #expect(a.writerExchangesForTesting() - before >= 2, "an index to keep: not sent whole")
        let connection = try PGConnection(url: url)
        let indexed = try connection.query("SELECT child_key FROM query_index WHERE location = 'items' AND spec = 'score' ORDER BY num")
        #expect((0..<indexed.rowCount).map { indexed.text($0, 0) } == ["k0", "k1", "k2", "k3", "k5"])
        #expect(try connection.query("SELECT seq FROM changes ORDER BY seq").rowCount == 5)
        let query = TreeQuery(orderBy: .child(Self.path("score")), limit: .first(2))
        #expect(try a.readSync { try $0.query(query, at: Self.path("/items")) } == ["k0": ["score": 0], "k1": ["score": 1]])
    }

    /// The server refuses the writes or the mark, sent in one exchange with the NOTIFY and
    /// the COMMIT (a check constraint added just before it on the tree's rows or on the
    /// node's mark row, which the first batch made): it ran none after it, so the batch is
    /// rolled back and its write fails with the server's error at once, not through the
    /// lost-commit lookup, and nothing of it is written. The writer goes on on its session.
    @Test(arguments: ["nodes", "hearth_batches"])
    func aStatementRefusedBeforeItsCommitRollsTheBatchBackWithoutALookup(table: String) throws {
        let url = try PostgresCluster.shared().makeDatabase()
        let refuseNext = Atomic<Bool>(false)
        let engine = try PostgresEngine(url: url, options: StoreOptions(), clock: WallClock.milliseconds, hooks: EngineHooks()) {
            guard refuseNext.exchange(false, ordering: .relaxed) else { return }
            _ = try? PGConnection(url: url).execute("ALTER TABLE \(table) ADD CONSTRAINT test_refuse CHECK (false) NOT VALID")
        }
        defer { engine.close() }
        try engine.writeSync(.set(WriteEntry(path: Self.path("/before"), value: 1)), check: nil)
        refuseNext.store(true, ordering: .relaxed)
        let refused = Result { () throws(WriteFailure) in try engine.writeSync(.set(WriteEntry(path: Self.path("/refused"), value: 2)), check: nil) }
        guard case .failure(.store(let store)) = refused else { Issue.record("not a plain store failure: \(refused)"); return }
        #expect("\(store)".contains("test_refuse"), "\(store)")
        #expect(engine.lostCommitsResolved.load(ordering: .relaxed) == 0)
        try PGConnection(url: url).execute("ALTER TABLE \(table) DROP CONSTRAINT test_refuse")
        try engine.writeSync(.set(WriteEntry(path: Self.path("/after"), value: 3)), check: nil)
        #expect(try engine.readSync { try $0.value(at: .root) } == ["before": 1, "after": 3])
        #expect(try engine.changes(after: 0, limit: 10).changes.map(\.seq) == [1, 2])
    }

    /// The change numbers a feed handed on, in order.
    private final class Heard: Sendable {
        let seqs = Mutex<[Int64]>([])
        var all: [Int64] { seqs.withLock { $0 } }
    }

    /// An engine on a new database, a feed on it that is not started (no listener: only the
    /// reads a test asks for) recording the numbers it hands on, and a session to look on.
    private static func feedBesideAnEngine() throws -> (PostgresEngine, ChangeFeed, Heard, PGConnection) {
        let url = try PostgresCluster.shared().makeDatabase()
        let engine = try PostgresEngine(url: url)
        let heard = Heard()
        do {
            let feed = try ChangeFeed(url: url, onCommit: { changes, _ in heard.seqs.withLock { $0 += changes.map(\.seq) } })
            return (engine, feed, heard, try PGConnection(url: url))
        } catch {
            engine.close()
            throw error
        }
    }

    /// The feed's read (after a batch of this node's, or a wake-up): the previous read's
    /// COMMIT, the new snapshot and the changes in it in one round trip; the snapshot stays
    /// open after the changes were handed on with a view of it. A read that finds nothing
    /// new commits at once, so no snapshot is left open while the feed is idle.
    @Test func aFeedReadTakesOneRoundTripAndLeavesNoSnapshotOpenWhenIdle() throws {
        let (engine, feed, heard, observer) = try Self.feedBesideAnEngine()
        defer { engine.close() }
        let session = try feed.sessionForTesting()
        func state() throws -> String {
            try observer.query("SELECT state FROM pg_stat_activity WHERE pid = $1", [.int(session)]).text(0, 0)
        }
        #expect(try state() == "idle")
        for seq in 1...3 {
            try engine.writeSync(.set(WriteEntry(path: Self.path("/f/\(seq)"), value: .int(Int64(seq)))), check: nil)
            let before = feed.exchangesForTesting()
            feed.deliver(through: Int64(seq), local: [])
            #expect(feed.exchangesForTesting() - before == 1)
            #expect(try state() == "idle in transaction")
        }
        #expect(heard.all == [1, 2, 3])
        #expect(feed.deliveredSeq == 3)
        // Nothing new: the open snapshot's COMMIT goes with the read, and the read's own
        // COMMIT follows it.
        let before = feed.exchangesForTesting()
        feed.setPausedForTesting(false)
        #expect(feed.exchangesForTesting() - before == 2)
        #expect(try state() == "idle")
        #expect(heard.all == [1, 2, 3])
    }

    /// A session the server ends while the feed's snapshot is open (a restart, a failover,
    /// its idle-in-transaction timeout) is not seen before the next read is sent on it: that
    /// read fails, and the feed reads again at once on a new session, so the writer's
    /// delivery does not wait for the next wake-up.
    @Test func aFeedWhoseSessionEndedWithItsSnapshotOpenReadsAgainOnANewOne() throws {
        let (engine, feed, heard, observer) = try Self.feedBesideAnEngine()
        defer { engine.close() }
        try engine.writeSync(.set(WriteEntry(path: Self.path("/g/1"), value: 1)), check: nil)
        feed.deliver(through: 1, local: [])
        let session = try feed.sessionForTesting()
        #expect(try observer.query("SELECT state FROM pg_stat_activity WHERE pid = $1", [.int(session)]).text(0, 0) == "idle in transaction")
        // Waits up to 10 s for the session's process to be gone.
        #expect(try observer.query("SELECT pg_terminate_backend($1::int, 10000)", [.int(session)]).bool(0, 0))
        try engine.writeSync(.set(WriteEntry(path: Self.path("/g/2"), value: 2)), check: nil)
        feed.deliver(through: 2, local: [])
        #expect(feed.deliveredSeq == 2)
        #expect(heard.all == [1, 2])
        #expect(try feed.sessionForTesting() != session)
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
    /// runs. With no change after the batch's base, the base stays the last number.
    @Test func theMarkTakesItsValuesAsParameters() throws {
        let url = try PostgresCluster.shared().makeDatabase()
        let engine = try PostgresEngine(url: url)
        engine.close()
        let (connection, listener) = (try PGConnection(url: url), try PGConnection(url: url))
        let channel = "a'b; DROP TABLE changes; --"
        try listener.execute("LISTEN \"a'b; DROP TABLE changes; --\"")
        let node = "n'); DELETE FROM hearth_meta; --"
        try connection.execute("BEGIN")
        let answers = connection.runPipelined([PostgresEngine.mark(after: 7, node: node, token: "t'1", at: 9, channel: channel), .init(sql: "COMMIT")])
        #expect(answers.failure.map { "\($0)" } == nil && answers.results.count == 2)
        #expect(answers.results.first?.int64(0, 0) == 7)
        let mark = try connection.query("SELECT token, at, last_seq, base_seq FROM hearth_batches WHERE node = $1", [.text(node)])
        #expect(mark.text(0, 0) == "t'1" && mark.int64(0, 1) == 9 && mark.int64(0, 2) == 7 && mark.int64(0, 3) == 7)
        #expect(try connection.query("SELECT value FROM hearth_meta WHERE key = 'last_seq'").int64(0, 0) == 7)
        #expect(try connection.query("SELECT count(*) FROM changes").int64(0, 0) == 0, "the changes table is still there")
        #expect(try listener.waitForNotification(timeoutMilliseconds: 10_000) == ["7"])
    }

    /// The mark sent in the same exchange as the batch's writes, before their answer: the
    /// last number it records, stores and announces is the newest change the batch logged
    /// after its base, not an older one and not the base.
    @Test func theMarkTakesTheBatchsLastNumberFromTheChangesItLogged() throws {
        let url = try PostgresCluster.shared().makeDatabase()
        let engine = try PostgresEngine(url: url)
        engine.close()
        let (connection, listener) = (try PGConnection(url: url), try PGConnection(url: url))
        try listener.execute("LISTEN feed")
        try connection.execute("INSERT INTO changes(seq, path, kind, data, at) VALUES (3, 'a', 'put', '1', 1)")
        try connection.execute("BEGIN")
        let logged = PGConnection.Statement(sql: "INSERT INTO changes(seq, path, kind, data, at) VALUES (8, 'b', 'put', '2', 2), (9, 'c', 'put', '3', 2)")
        let answers = connection.runPipelined([logged, PostgresEngine.mark(after: 7, node: "n", token: "t", at: 2, channel: "feed"), .init(sql: "COMMIT")])
        #expect(answers.failure.map { "\($0)" } == nil && answers.results.count == 3)
        #expect(answers.results[1].int64(0, 0) == 9)
        #expect(try connection.query("SELECT last_seq FROM hearth_batches WHERE node = 'n'").int64(0, 0) == 9)
        #expect(try connection.query("SELECT value FROM hearth_meta WHERE key = 'last_seq'").int64(0, 0) == 9)
        #expect(try listener.waitForNotification(timeoutMilliseconds: 10_000) == ["9"])
    }

    /// A batch sent whole does not know its base when it sends its mark: with none given,
    /// the mark takes the last number as the ordering lock found it (before the batch's
    /// changes), records it beside the batch's last, and announces the last.
    @Test func aMarkWithoutABaseTakesTheLastNumberTheLockFound() throws {
        let url = try PostgresCluster.shared().makeDatabase()
        let engine = try PostgresEngine(url: url)
        engine.close()
        let connection = try PGConnection(url: url)
        try connection.execute("UPDATE hearth_meta SET value = 7 WHERE key = 'last_seq'")
        try connection.execute("BEGIN")
        let logged = PGConnection.Statement(sql: "INSERT INTO changes(seq, path, kind, data, at) VALUES (8, 'b', 'put', '2', 2), (9, 'c', 'put', '3', 2)")
        let answers = connection.runPipelined([.init(sql: PostgresEngine.orderingLockSQL), logged,
                                               PostgresEngine.mark(after: nil, node: "n", token: "t", at: 2, channel: "feed"), .init(sql: "COMMIT")])
        #expect(answers.failure.map { "\($0)" } == nil && answers.results.count == 4)
        #expect(answers.results[0].int64(0, 0) == 7 && answers.results[2].int64(0, 0) == 9)
        let mark = try connection.query("SELECT base_seq, last_seq FROM hearth_batches WHERE node = 'n'")
        #expect(mark.int64(0, 0) == 7 && mark.int64(0, 1) == 9)
        #expect(try connection.query("SELECT value FROM hearth_meta WHERE key = 'last_seq'").int64(0, 0) == 9)
    }
}
