import Foundation
import Synchronization
import Testing

/// PostgreSQL going away under three nodes: a private cluster (`PostgresCluster.
/// startPrivate()`) is killed as a crash would (SIGKILL of the postmaster and every backend)
/// and restarted, several times, while writers on every node increment one counter.
@Suite(.enabled(if: PostgresTests.enabled)) struct PostgresOutageEndToEndTests {
    /// The texts a write may get (docs/rest.md, "When the store is unavailable").
    static let notMade = "Service unavailable; the write was not made, nothing was written"
    static let outcomeUnknown = "Service unavailable; the write's outcome is unknown: it may have been written"

    /// The log's lines for an outage's start (a warning) and end (an info).
    static let outageStarted = "the data store cannot be reached"
    static let outageEnded = "the data store answers again"

    /// PostgreSQL's `commit_delay` on the killed cluster, µs (its maximum is 100,000).
    static let commitDelayMicroseconds = 20_000

    /// What the writers were answered, by write id.
    final class Answers: Sendable {
        struct Tally { var acked: Set<String> = [], notMade: Set<String> = [], unknown: Set<String> = [], other: [String] = [], without503RetryAfter = 0 }
        private let tally = Mutex(Tally())
        private let arrived = DispatchSemaphore(value: 0)
        var now: Tally { tally.withLock { $0 } }

        func record(_ id: String, _ answer: Result<CurlResult, any Error>) {
            tally.withLock { tally in
                switch answer {
                case .success(let result) where result.status == 200: tally.acked.insert(id)
                case .success(let result) where result.status == 503:
                    if result.headers["retry-after"] != "1" { tally.without503RetryAfter += 1 }
                    let text = (json(result.body) as? [String: Any])?["error"] as? String
                    if text == PostgresOutageEndToEndTests.notMade {
                        tally.notMade.insert(id)
                    } else if text == PostgresOutageEndToEndTests.outcomeUnknown {
                        tally.unknown.insert(id)
                    } else {
                        tally.other.append("\(id): 503 \(result.body)")
                    }
                case .success(let result): tally.other.append("\(id): \(result.status) \(result.body)")
                case .failure(let error): tally.other.append("\(id): \(error)")
                }
            }
            arrived.signal()
        }

        /// Waits (answer by answer, at most `seconds`) until `condition` holds.
        func wait(seconds: Int = 120, until condition: (Tally) -> Bool) -> Bool {
            let deadline = DispatchTime.now() + .seconds(seconds)
            while !condition(now) {
                if DispatchTime.now() > deadline { return false }
                _ = arrived.wait(timeout: .now() + .milliseconds(100))
            }
            return true
        }
    }

    /// The key property: no write answered "nothing was written" was applied. Each write is
    /// one multi-path update (an increment of `/counter` and its own `/log/<id>`), so the
    /// log says exactly which writes committed: every acknowledged one, some answered
    /// "outcome unknown", none answered "not made"; and the counter equals the log's size.
    /// Every other kill comes while a batch that committed waits for its answer (so its
    /// writes must be answered "outcome unknown": never the false "not attempted");
    /// the others at a random moment under load.
    @Test func killedAndRestartedUnderIncrementsNoWriteAnsweredNotMadeIsApplied() throws {
        let cluster = try PostgresCluster.startPrivate()
        // Each COMMIT waits 20 ms before its WAL flush (commit_siblings 0: always), so a kill
        // at a random moment under load lands between a COMMIT sent and its answer far more
        // often than on an idle server: the case the batch marks are for.
        try cluster.sql("ALTER SYSTEM SET commit_delay = \(Self.commitDelayMicroseconds)")
        try cluster.sql("ALTER SYSTEM SET commit_siblings = 0")
        try cluster.sql("SELECT pg_reload_conf()")
        let url = try cluster.makeDatabase()
        let directories = (0..<3).map { _ in TemporaryDirectory() }
        let nodes = try directories.map { try HearthProcess.serve(dataDirectory: $0.path, environment: ["HEARTH_STORE": url]) }
        let answers = Answers()
        let stop = Atomic<Bool>(false)
        let writers = DispatchGroup()
        let writerCount = 6  // two per node
        for writer in 0..<writerCount {
            DispatchQueue.global().async(group: writers) {
                var i = 0
                while !stop.load(ordering: .relaxed) {
                    let id = "w\(writer)-\(i)"
                    i += 1
                    let body = #"{"counter": {".sv": {"increment": 1}}, "log/\#(id)": true}"#
                    answers.record(id, Result { try curl("PATCH", nodes[writer % 3].baseURL + "/.json", body: body) })
                }
            }
        }
        defer {
            stop.store(true, ordering: .relaxed)
            writers.wait()
        }
        let rounds = 4
        var outage: (read: CurlResult?, ready: CurlResult?) = (nil, nil)
        for round in 0..<rounds {
            let acked = answers.now.acked.count
            #expect(answers.wait { $0.acked.count >= acked + 50 }, "round \(round): writes before the kill")
            if round % 2 == 0 {
                try Self.holdTheNextCommitsAnswer(cluster)
            }
            try cluster.kill()
            let failed = answers.now.notMade.count + answers.now.unknown.count
            #expect(answers.wait { $0.notMade.count + $0.unknown.count >= failed + writerCount }, "round \(round): failures while down")
            if round == 0 {
                outage = (try curl("GET", nodes[1].baseURL + "/counter.json"), try curl("GET", nodes[2].baseURL + "/readyz"))
                // The first outage lasts until every node has logged it.
                for node in nodes { try node.waitForLog(Self.outageStarted, count: 1) }
            }
            try cluster.restart()
            if round == 0 {
                for node in nodes { try node.waitForLog(Self.outageEnded, count: 1) }
            }
            let back = answers.now.acked.count
            #expect(answers.wait { $0.acked.count >= back + 50 }, "round \(round): writes after the restart")
        }
        stop.store(true, ordering: .relaxed)
        writers.wait()
        let tally = answers.now

        // While PostgreSQL was down: a read says it was not served, /readyz says why.
        #expect(outage.read?.status == 503)
        #expect(outage.read?.body == #"{"error":"Service unavailable; the read was not served"}"#)
        #expect(outage.ready?.status == 503)
        #expect(outage.ready?.body == #"{"error":"Not ready: the database cannot be reached; reads and writes fail until it answers"}"#)
        #expect(outage.ready?.headers["retry-after"] == "1")

        #expect(tally.other.isEmpty, "answers that are none of 200, not made, outcome unknown: \(tally.other.prefix(5))")
        #expect(tally.without503RetryAfter == 0)
        let logged = try #require(json(try curl("GET", nodes[0].baseURL + "/log.json").body) as? [String: Any])
        let applied = Set(logged.keys)
        #expect(tally.acked.subtracting(applied).isEmpty, "acknowledged but missing: \(tally.acked.subtracting(applied).prefix(5))")
        #expect(tally.notMade.intersection(applied).isEmpty, "answered 'nothing was written' but applied: \(tally.notMade.intersection(applied))")
        #expect(applied.subtracting(tally.acked).subtracting(tally.unknown).isEmpty)
        for node in nodes {
            #expect(try curl("GET", node.baseURL + "/counter.json").body == String(applied.count))
        }
        // The log: no error line; an outage is one warning and one info at most, never a
        // line per failed check (kills within a minute of each other are announced once,
        // StoreOutageReportTests; how many fall within it depends on this machine's speed).
        for node in nodes {
            let lines = node.log.split(separator: "\n")
            #expect(lines.filter { $0.contains(" error ") }.isEmpty, "error lines: \(lines.filter { $0.contains(" error ") }.prefix(3))")
            #expect(!lines.contains { $0.contains(" warning ") && $0.contains("readiness check failed") }, "a warning per /readyz probe")
            let started = lines.filter { $0.contains(" warning ") && $0.contains(Self.outageStarted) }.count
            let ended = lines.filter { $0.contains(" info ") && $0.contains(Self.outageEnded) }.count
            #expect((1...rounds).contains(started), "\(node.log)")
            #expect((1...started).contains(ended), "\(node.log)")
        }
        let unknownApplied = tally.unknown.intersection(applied).count
        // Every other kill came while a committed batch's answer was held back.
        #expect(unknownApplied >= rounds / 2, "committed writes answered 'outcome unknown'")
        print("outage: \(rounds) kills; \(tally.acked.count) acknowledged, \(tally.notMade.count) not made (\(tally.notMade.intersection(applied).count) applied), \(tally.unknown.count) outcome unknown (\(unknownApplied) applied); counter \(applied.count)")
    }

    /// Makes the next COMMIT wait, once written and flushed, for a synchronous standby that
    /// does not exist, and returns once one does: a kill now loses the answer of a batch that
    /// committed (crash recovery replays it). The setting is reset in the configuration
    /// file at once, so the restart after the kill runs without it.
    static func holdTheNextCommitsAnswer(_ cluster: PostgresCluster) throws {
        try cluster.sql("ALTER SYSTEM SET synchronous_standby_names = 'nobody'")
        try cluster.sql("SELECT pg_reload_conf()")
        try cluster.sql("ALTER SYSTEM RESET synchronous_standby_names")
        let deadline = ContinuousClock.now.advanced(by: .seconds(60))
        while try cluster.value("SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'SyncRep'") == "0" {
            guard ContinuousClock.now < deadline else {
                Issue.record("no COMMIT waited for the standby")
                return
            }
        }
    }

    /// `hearth serve` with PostgreSQL as its store, not waiting to be listening.
    static func startNode(url: String, in directory: TemporaryDirectory, environment: [String: String] = [:]) throws -> HearthProcess {
        let rules = try HearthProcess.writeRules(HearthProcess.openRules, in: directory.path)
        return try HearthProcess(arguments: ["serve", "--port", "0", "--data-dir", directory.path, "--rules", rules],
                                 dataDirectory: directory.path, environment: environment.merging(["HEARTH_STORE": url]) { $1 })
    }

    /// Nodes started while PostgreSQL is down: one allowed to wait 1 s gives up after it,
    /// saying what to check and how many connections a node needs; one with the default
    /// wait logs that it waits, and serves once the database is back.
    @Test func aNodeStartedWhileTheDatabaseIsDownWaitsForIt() throws {
        let cluster = try PostgresCluster.startPrivate()
        let url = try cluster.makeDatabase()
        try cluster.kill()
        let (early, patient) = (TemporaryDirectory(), TemporaryDirectory())
        let impatient = try Self.startNode(url: url, in: early, environment: ["HEARTH_STORE_STARTUP_WAIT_SECONDS": "1"])
        let node = try Self.startNode(url: url, in: patient)
        #expect(try impatient.waitForExit() != 0)
        #expect(impatient.log.contains("cannot reach the database after trying for 1 s (storeStartupWaitSeconds)"), "\(impatient.log)")
        #expect(impatient.log.contains("each node holds \(Self.connectionsPerNode) (readerCount 2 + 5)"), "\(impatient.log)")
        // Tries at 0, 0.5 and 1 s (a slow first try leaves room for fewer), each failure but
        // the last logged.
        #expect((1...2).contains(impatient.log.components(separatedBy: "cannot reach the database (").count - 1), "\(impatient.log)")
        try node.waitForLog("cannot reach the database (", count: 2)
        try cluster.restart()
        try node.waitUntilListening()
        #expect(node.log.contains("reached the database after"))
        #expect(try curl("PUT", node.baseURL + "/a.json", body: "1").status == 200)
        #expect(try curl("GET", node.baseURL + "/readyz").status == 200)
    }

    /// The connections a node holds with the default settings (`PostgresEngine.connections(for:)`).
    static let connectionsPerNode = 7

    /// A node whose role is out of connections (PostgreSQL's per-role limit here, as a full
    /// `max_connections` would be) waits, and comes up once there are enough: one fewer
    /// than `connectionsPerNode` is not enough, exactly that many is.
    @Test func aNodeStartedWhileTheDatabaseIsOutOfConnectionsWaitsForThem() throws {
        let cluster = try PostgresCluster.startPrivate()
        let url = try cluster.makeDatabase()
        try cluster.sql("ALTER ROLE hearth CONNECTION LIMIT \(Self.connectionsPerNode - 1)")
        let directory = TemporaryDirectory()
        let node = try Self.startNode(url: url, in: directory)
        try node.waitForLog("too many connections for role", count: 2)
        #expect(node.log.contains("max_connections leaves \(Self.connectionsPerNode) for every Hearth node"), "\(node.log)")
        try cluster.sql("ALTER ROLE hearth CONNECTION LIMIT \(Self.connectionsPerNode)")
        try node.waitUntilListening()
        #expect(try curl("PUT", node.baseURL + "/a.json", body: "1").status == 200)
        #expect(try curl("GET", node.baseURL + "/a.json").status == 200)
    }
}
