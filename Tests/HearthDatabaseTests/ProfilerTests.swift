import HearthJSON
import HearthRules
import HearthSQLite
import HearthStore
import HearthTesting
import Synchronization
import Testing
@testable import HearthDatabase

/// The profiler fed from literals: exact counts under a known mix, path patterns, every
/// table's bound crossed, nothing recorded while off, the window's end.
@Suite struct ProfilerTests {
    static let rules = #"""
    {"rules": {
      "users": {"$uid": {".read": "auth != null && auth.uid == $uid", ".write": "auth != null && auth.uid == $uid",
                         "favorites": {"$favId": {".validate": "newData.isString()"}},
                         "admin": {".validate": false}}},
      "items": {".read": true, ".indexOn": ["score"]}
    }}
    """#

    /// A monotonic clock the test moves.
    final class ManualClock: Sendable {
        let nanoseconds = Atomic<UInt64>(1_000_000_000)
        func advance(seconds: UInt64) { nanoseconds.add(seconds * 1_000_000_000, ordering: .relaxed) }
        var read: @Sendable () -> UInt64 { { self.nanoseconds.load(ordering: .relaxed) } }
    }

    static func path(_ text: String) -> DataPath { try! DataPath(string: text) }

    static func profiler(_ clock: ManualClock = ManualClock()) -> Profiler {
        Profiler(clock: clock.read, wallClock: { 1_700_000_000_000 })
    }

    static let literalPatterns: @Sendable (DataPath) -> String = { $0.description }

    @Test func patternsCollapseKeysByTheRulesWildcards() throws {
        let rules = try RuleSet.compile(Self.rules)
        #expect(rules.pattern(of: .root) == "/")
        #expect(rules.pattern(of: Self.path("/users/alice")) == "/users/$uid")
        #expect(rules.pattern(of: Self.path("/users/alice/favorites/x1")) == "/users/$uid/favorites/$favId")
        // A named child wins over the wildcard sibling; keys past the rules are $other.
        #expect(rules.pattern(of: Self.path("/users/alice/admin")) == "/users/$uid/admin")
        #expect(rules.pattern(of: Self.path("/users/alice/favorites/x1/deep/er")) == "/users/$uid/favorites/$favId/$other/$other")
        #expect(rules.pattern(of: Self.path("/items/i1")) == "/items/$other")
        #expect(rules.pattern(of: Self.path("/elsewhere/a")) == "/$other/$other")
    }

    @Test func aKnownMixGivesExactCountsTimesAndBytes() throws {
        let profiler = Self.profiler()
        try profiler.start(seconds: 60, patterns: Self.literalPatterns)
        for ms in 1...100 {
            profiler.record(.read, at: Self.path("/a"), nanoseconds: Int64(ms) * 1_000_000, bytesIn: 0, bytesOut: 10)
        }
        profiler.record(.write, at: Self.path("/a"), nanoseconds: 4_000, bytesIn: 7, bytesOut: 2)
        profiler.record(.write, at: Self.path("/a"), nanoseconds: 6_000, bytesIn: 3, bytesOut: 2)
        profiler.record(.update, at: Self.path("/b"), nanoseconds: 1_000, bytesIn: 5)
        profiler.record(.listenBroadcast, at: Self.path("/b"), nanoseconds: 3_000, bytesOut: 90, count: 3)
        profiler.recordAuth(.rest, nanoseconds: 500)
        let report = try #require(profiler.stop())
        let reads = try #require(report.operation(.read, "/a"))
        #expect(reads.count == 100 && reads.bytesOut == 1000 && reads.bytesIn == 0)
        #expect(reads.meanNanoseconds == 50_500_000)
        #expect(reads.p50Nanoseconds == 50_000_000 && reads.p99Nanoseconds == 99_000_000)
        let writes = try #require(report.operation(.write, "/a"))
        #expect(writes.count == 2 && writes.bytesIn == 10 && writes.bytesOut == 4 && writes.meanNanoseconds == 5_000)
        #expect(report.operation(.update, "/b")?.count == 1)
        let broadcasts = try #require(report.operation(.listenBroadcast, "/b"))
        #expect(broadcasts.count == 3 && broadcasts.bytesOut == 90 && broadcasts.meanNanoseconds == 1_000)
        #expect(report.operation(.auth, "(rest)")?.count == 1)
        #expect(report.operations.count == 5)
        // The slowest single operations, slowest first: the ten slowest reads.
        #expect(report.slowest.count == Profiler.Limits.maxSlowest)
        #expect(report.slowest.map(\.nanoseconds) == (91...100).reversed().map { Int64($0) * 1_000_000 })
        #expect(report.slowest.allSatisfy { $0.kind == "read" && $0.path == "/a" })
        let json = report.json
        #expect(json.objectValue?["operations"] != nil && json.objectValue?["requestedSeconds"] == .int(60))
    }

    @Test func offItRecordsNothing() throws {
        let profiler = Self.profiler()
        #expect(!profiler.isRecording && profiler.timing == nil)
        profiler.record(.read, at: Self.path("/a"), nanoseconds: 1)
        profiler.denied("read", at: Self.path("/a"), rule: "no rule granted")
        profiler.unindexed(at: Self.path("/a"), index: "x")
        profiler.rulesEvaluated([RuleTime(location: "/rules/.read", nanoseconds: 1)])
        #expect(profiler.stop() == nil)
        try profiler.start(seconds: 1, patterns: Self.literalPatterns)
        let empty = try #require(profiler.stop())
        #expect(empty.operations.isEmpty && empty.denials.isEmpty && empty.rules.isEmpty)
        // Stopped: off again.
        profiler.record(.read, at: Self.path("/a"), nanoseconds: 1)
        #expect(profiler.stop() == nil)
    }

    @Test func theWindowEndsAtItsDurationAndKeepsItsReportUntilFetched() throws {
        let clock = ManualClock()
        let profiler = Self.profiler(clock)
        #expect(throws: Profiler.StartError.badDuration) { try profiler.start(seconds: 0, patterns: Self.literalPatterns) }
        #expect(throws: Profiler.StartError.badDuration) {
            try profiler.start(seconds: Profiler.Limits.maxDurationSeconds + 1, patterns: Self.literalPatterns)
        }
        try profiler.start(seconds: Profiler.Limits.maxDurationSeconds, patterns: Self.literalPatterns)
        #expect(throws: Profiler.StartError.alreadyRecording(secondsLeft: Profiler.Limits.maxDurationSeconds)) {
            try profiler.start(seconds: 5, patterns: Self.literalPatterns)
        }
        _ = profiler.stop()
        try profiler.start(seconds: 10, patterns: Self.literalPatterns)
        profiler.record(.read, at: Self.path("/a"), nanoseconds: 1)
        clock.advance(seconds: 10)
        #expect(profiler.secondsLeft == nil)
        profiler.record(.read, at: Self.path("/a"), nanoseconds: 1)
        #expect(!profiler.isRecording)
        profiler.record(.read, at: Self.path("/a"), nanoseconds: 1)
        let report = try #require(profiler.stop())
        #expect(report.operation(.read, "/a")?.count == 1)
        #expect(report.endedAt - report.startedAt == 10_000)
    }

    @Test func everyTableIsBoundedWithAnOtherRow() throws {
        let profiler = Self.profiler()
        try profiler.start(seconds: 60, patterns: Self.literalPatterns)
        let over = 5
        // More samples than a row keeps: the percentiles come from a bounded sample.
        for _ in 0..<(Profiler.Limits.samplesPerRow * 2) {
            profiler.record(.write, at: Self.path("/w"), nanoseconds: 7)
        }
        // The table of patterns is shared by the kinds: /w holds one of its rows.
        for i in 0..<(Profiler.Limits.maxPatterns - 1 + over) {
            profiler.record(.read, at: Self.path("/p\(i)"), nanoseconds: 1)
        }
        for i in 0..<(Profiler.Limits.maxDenials + over) {
            profiler.denied("write", at: Self.path("/d\(i)"), rule: "no rule granted")
        }
        for i in 0..<(Profiler.Limits.maxUnindexed + over) {
            profiler.unindexed(at: Self.path("/u\(i)"), index: "score")
        }
        profiler.rulesEvaluated((0..<(Profiler.Limits.maxRules + over)).map { RuleTime(location: "/rules/r\($0)/.read", nanoseconds: 1) })
        let report = try #require(profiler.stop())
        let reads = report.operations.filter { $0.kind == "read" }
        #expect(reads.count == Profiler.Limits.maxPatterns - 1 + 1)
        #expect(report.operation(.read, Profiler.otherRow)?.count == over)
        #expect(report.denials.count == Profiler.Limits.maxDenials + 1)
        #expect(report.denials.first { $0.rule == Profiler.otherRow }?.count == over)
        #expect(report.unindexedQueries.count == Profiler.Limits.maxUnindexed + 1)
        #expect(report.unindexedQueries.first { $0.path == Profiler.otherRow }?.count == over)
        #expect(report.rules.count == Profiler.Limits.maxRules + 1)
        #expect(report.rules.first { $0.rule == Profiler.otherRow }?.count == over)
        let writes = try #require(report.operation(.write, "/w"))
        #expect(writes.count == Profiler.Limits.samplesPerRow * 2 && writes.p50Nanoseconds == 7 && writes.p99Nanoseconds == 7)
    }

    @Test func theSampleOfARowStaysWithinItsBound() {
        var window = ProfileWindow(seconds: 60, startedAt: 0, now: 0, patterns: Self.literalPatterns)
        for i in 0..<(Profiler.Limits.samplesPerRow * 3) {
            window.operation(.read, at: Self.path("/a"), nanoseconds: Int64(i), bytesIn: 0, bytesOut: 0, count: 1)
        }
        #expect(window.sampleCount(.read, "/a") == Profiler.Limits.samplesPerRow)
    }

    @Test func theDatabaseReportsDenialsByRuleUnindexedQueriesAndRuleTimes() async throws {
        let directory = TemporaryDirectory()
        let store = try SQLiteTreeStore(directory: directory.path)
        defer { store.close() }
        let profiler = Self.profiler()
        let database = Database(store: store, policy: RulesAccessPolicy(rules: try RuleSet.compile(Self.rules), profiler: profiler),
                                profiler: profiler)
        try database.startProfile(seconds: 60)
        let alice = Caller(auth: .object(["uid": .string("alice")]))
        let bob = Caller(auth: .object(["uid": .string("bob")]))
        func write(_ text: String, _ value: JSONValue, as caller: Caller) async -> Result<WriteOutcome, DatabaseError> {
            await withCheckedContinuation { continuation in
                database.write(.set(WriteEntry(path: Self.path(text), value: value)), as: caller) { continuation.resume(returning: $0) }
            }
        }
        _ = await write("/users/alice/favorites/f1", .string("ok"), as: alice)
        _ = await write("/users/alice/favorites/f2", .int(3), as: alice)
        _ = await write("/users/alice/favorites/f3", .string("x"), as: bob)
        _ = await write("/users/carol/favorites/f3", .string("x"), as: bob)
        // No .write rule anywhere on this path: nothing to name but the missing grant.
        _ = await write("/elsewhere/x", .string("x"), as: bob)
        let read = await withCheckedContinuation { continuation in
            database.read(Self.path("/users/alice"), as: bob, { _ in () }) { continuation.resume(returning: $0) }
        }
        guard case .failure(.permissionDenied) = read else { Issue.record("bob read alice's data"); return }
        var byScore = DatabaseQuery(orderBy: .child(Self.path("/score")))
        byScore.limit(toFirst: 1)
        var byName = DatabaseQuery(orderBy: .child(Self.path("/name")))
        byName.limit(toFirst: 1)
        #expect(database.missingIndex(byScore, at: Self.path("/items")) == nil)
        #expect(database.missingIndex(byName, at: Self.path("/items")) == "name")
        #expect(database.missingIndex(DatabaseQuery(orderBy: .value), at: Self.path("/users/alice/favorites")) == ".value")
        let report = try #require(profiler.stop())
        // A failed .validate by its location; a missing grant by the last .write (.read)
        // that evaluated false on the path, or "no rule granted" where the path has none.
        #expect(Set(report.denials.map { "\($0.operation) \($0.rule) \($0.path) \($0.count)" }) == [
            "write /rules/users/$uid/favorites/$favId/.validate /users/$uid/favorites/$favId 1",
            "write /rules/users/$uid/.write /users/$uid/favorites/$favId 2",
            "write no rule granted /$other/$other 1",
            "read /rules/users/$uid/.read /users/$uid 1",
        ])
        #expect(report.unindexedQueries == [
            ProfileReport.Unindexed(path: "/items", indexOn: "name", count: 1),
            ProfileReport.Unindexed(path: "/users/$uid/favorites", indexOn: ".value", count: 1),
        ].sorted { $0.path < $1.path })
        let writeRule = try #require(report.rules.first { $0.rule == "/rules/users/$uid/.write" })
        #expect(writeRule.count >= 4)
        #expect(report.rules.contains { $0.rule == "/rules/users/$uid/favorites/$favId/.validate" })
    }
}
