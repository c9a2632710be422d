import Foundation
import Synchronization
import Testing

/// Three `hearth serve` nodes on one PostgreSQL database, from a throwaway
/// cluster the tests start themselves (`PostgresCluster`: initdb in a temporary folder,
/// loopback, a free port, a role without superuser rights).
@Suite(.enabled(if: PostgresTests.enabled)) struct MultiNodeEndToEndTests {
    /// Three nodes, each with its own local folder, on one fresh database.
    final class Nodes: Sendable {
        let directories = (0..<3).map { _ in TemporaryDirectory() }
        let url: String
        let nodes: [HearthProcess]

        init(rules: String = HearthProcess.openRules, environment: [String: String] = [:]) throws {
            let url = try PostgresCluster.shared().makeDatabase()
            self.url = url
            nodes = try directories.map { directory in try Self.start(directory.path, url: url, rules: rules, environment: environment) }
        }

        static func start(_ directory: String, url: String, rules: String, environment: [String: String] = [:]) throws -> HearthProcess {
            try HearthProcess.serve(dataDirectory: directory, rules: rules, environment: environment.merging(["HEARTH_STORE": url]) { $1 })
        }

        subscript(index: Int) -> HearthProcess { nodes[index] }
    }

    /// The `id:` and `data:` lines of every event in an SSE transcript, in order.
    static func events(_ transcript: String) -> [String] {
        transcript.components(separatedBy: "\n\n").compactMap { block in
            let lines = block.split(separator: "\n")
            guard let id = lines.first(where: { $0.hasPrefix("id: ") }), let data = lines.first(where: { $0.hasPrefix("data: ") }) else { return nil }
            return id + " " + data
        }
    }

    /// Writes on every node reach listeners on every node, in one order, with one
    /// numbering: the three transcripts are identical event for event.
    @Test func writesOnEachNodeReachEveryNodeInTheSameOrder() throws {
        let nodes = try Nodes()
        let streams = try (0..<3).map { try CurlStream(nodes[$0].baseURL + "/room.json") }
        for stream in streams { try stream.waitFor("event: put\n") }
        let perNode = 10
        let group = DispatchGroup()
        let failures = Mutex<[String]>([])
        for node in 0..<3 {
            DispatchQueue.global().async(group: group) {
                for i in 0..<perNode {
                    do {
                        let answer = try curl("PUT", nodes[node].baseURL + "/room/n\(node)-\(i).json", body: "\(i)")
                        if answer.status != 200 { failures.withLock { $0.append("\(node)/\(i): \(answer.status)") } }
                    } catch {
                        failures.withLock { $0.append("\(node)/\(i): \(error)") }
                    }
                }
            }
        }
        group.wait()
        #expect(failures.withLock { $0 }.isEmpty)
        for stream in streams { try stream.waitFor("event: put\nid: ", count: 1 + 3 * perNode) }
        let transcripts = streams.map { Self.events($0.text) }
        #expect(transcripts[0].count == 1 + 3 * perNode)
        #expect(transcripts[0] == transcripts[1], "node 0 and node 1 disagree")
        #expect(transcripts[0] == transcripts[2], "node 0 and node 2 disagree")
        // Numbered 1...30 with no gap, after the snapshot's event.
        let ids = transcripts[0].dropFirst().map { $0.split(separator: " ")[1] }
        // A mismatch shows the snapshot, the change log as the database holds it (which
        // write took each number) and each node's log.
        #expect(ids.map(String.init) == (1...(3 * perNode)).map(String.init), """
            snapshot: \(transcripts[0].first ?? "none")
            changes (seq|path|kind|data):
            \((try? PostgresCluster.shared().value("SELECT seq, path, kind, left(data, 60) FROM changes ORDER BY seq", in: nodes.url)) ?? "unreadable")
            \((0..<3).map { "node \($0):\n\(nodes[$0].log)" }.joined(separator: "\n"))
            """)
    }

    /// The SDKs' wire protocol across nodes: a listener on one node gets, once each and in
    /// commit order, writes made over the wire protocol on a second node and over REST on a third.
    @Test func wireProtocolListenersSeeWritesFromOtherNodes() throws {
        let nodes = try Nodes(rules: #"{"rules": {"open": {".read": true, ".write": true}}}"#)
        let python = try pythonInterpreter()
        let result = try runPythonDriver(python, script: "wire_client.py",
                                         arguments: ["cross_node", String(nodes[0].port), String(nodes[1].port), String(nodes[2].port)], environment: [:])
        #expect(result.status == 0, "cross_node failed:\n\(result.stdout)\n\(result.stderr)")
        #expect(result.stdout.contains("ok every write pushed once, in commit order"))
    }

    /// Compare-and-set transactions (ETag + if-match, as the SDKs' REST fallback and the
    /// Admin SDK run them) from every node at once keep an exact counter.
    @Test func concurrentTransactionsFromAllNodesKeepAnExactCounter() throws {
        let nodes = try Nodes()
        #expect(try curl("PUT", nodes[0].baseURL + "/counter.json", body: "0").status == 200)
        let perClient = 8
        let clients = 6  // two per node
        let conflicts = Atomic<Int>(0)
        let failures = Mutex<[String]>([])
        let group = DispatchGroup()
        for client in 0..<clients {
            DispatchQueue.global().async(group: group) {
                let base = nodes[client % 3].baseURL
                var done = 0
                var attempts = 0
                while done < perClient && attempts < 500 {
                    attempts += 1
                    do {
                        let read = try curl("GET", base + "/counter.json", headers: ["X-Firebase-ETag: true"])
                        guard let etag = read.headers["etag"], let value = Int(read.body) else {
                            failures.withLock { $0.append("read: \(read.status) \(read.body)") }
                            return
                        }
                        let write = try curl("PUT", base + "/counter.json", body: String(value + 1), headers: ["if-match: \(etag)"])
                        if write.status == 200 { done += 1 } else if write.status == 412 { conflicts.add(1, ordering: .relaxed) } else {
                            failures.withLock { $0.append("write: \(write.status) \(write.body)") }
                            return
                        }
                    } catch {
                        failures.withLock { $0.append("\(error)") }
                        return
                    }
                }
            }
        }
        group.wait()
        // A failure shows each node's log, where the server says why it refused.
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 })\n\((0..<3).map { "node \($0):\n\(nodes[$0].log)" }.joined(separator: "\n"))")
        for node in 0..<3 {
            #expect(try curl("GET", nodes[node].baseURL + "/counter.json").body == String(clients * perClient))
        }
        // Not asserted (timing decides it), reported for the reader of the log.
        print("counter: \(clients * perClient) increments, \(conflicts.load(ordering: .relaxed)) refused compare-and-sets")
    }

    /// A node killed (SIGKILL) while taking writes loses none it acknowledged: every one is
    /// read on the other nodes right after.
    @Test func aNodeKilledDuringWritesLosesNoAcknowledgedWrite() throws {
        let nodes = try Nodes()
        let acknowledged = Mutex<[Int]>([])
        let killAfter = 40
        let writer = DispatchGroup()
        DispatchQueue.global().async(group: writer) {
            for i in 0..<10_000 {
                guard let answer = try? curl("PUT", nodes[0].baseURL + "/log/w\(i).json", body: "\(i)"), answer.status == 200 else { return }
                let count = acknowledged.withLock { $0.append(i); return $0.count }
                if count == killAfter { nodes[0].signal(SIGKILL) }
            }
        }
        writer.wait()
        let acked = acknowledged.withLock { $0 }
        #expect(acked.count >= killAfter)
        for reader in [1, 2] {
            let body = try curl("GET", nodes[reader].baseURL + "/log.json").body
            let stored = (json(body) as? [String: Any]) ?? [:]
            let missing = acked.filter { stored["w\($0)"] == nil }
            #expect(missing.isEmpty, "node \(reader) misses acknowledged writes \(missing)")
        }
    }

    /// A stream cut off on one node resumes on another with `Last-Event-ID`: exactly the
    /// events it missed, no gap, no duplicate.
    @Test func aStreamResumesOnAnotherNodeWithNoGapAndNoDuplicate() throws {
        let nodes = try Nodes()
        let first = try CurlStream(nodes[0].baseURL + "/feed.json")
        try first.waitFor("event: put\n")
        for i in 1...5 { #expect(try curl("PUT", nodes[1].baseURL + "/feed/a\(i).json", body: "\(i)").status == 200) }
        try first.waitFor("event: put\nid: ", count: 6)
        let seen = Self.events(first.text)
        let lastID = String(seen.last!.split(separator: " ")[1])
        first.process.terminate()  // the client goes away (its node may or may not notice soon)
        // Missed while disconnected: written on node 1 and node 0.
        for i in 6...8 { #expect(try curl("PUT", nodes[i % 2].baseURL + "/feed/a\(i).json", body: "\(i)").status == 200) }
        let resumed = try CurlStream(nodes[2].baseURL + "/feed.json", headers: ["Last-Event-ID: \(lastID)"])
        try resumed.waitFor("event: put\nid: ", count: 3)
        #expect(try curl("PUT", nodes[2].baseURL + "/feed/a9.json", body: "9").status == 200)
        try resumed.waitFor("data: {\"path\":\"/a9\",\"data\":9}")
        let replayed = Self.events(resumed.text)
        let ids = replayed.map { Int($0.split(separator: " ")[1])! }
        let last = Int(lastID)!
        #expect(ids == Array((last + 1)...(last + 4)), "\(replayed)")
        #expect(replayed.first?.hasSuffix(#"{"path":"/a6","data":6}"#) == true, "\(replayed)")
    }

    /// The onDisconnect operations of a wire connection whose node was killed run on a
    /// surviving node once the dead node's lease runs out.
    @Test func onDisconnectRunsOnAnotherNodeAfterANodeDies() throws {
        let rules = #"{"rules": {"open": {".read": true, ".write": true}}}"#
        let nodes = try Nodes(rules: rules)
        let watcher = try CurlStream(nodes[1].baseURL + "/open/presence/me/state.json")
        try watcher.waitFor("event: put\n")
        let python = try pythonInterpreter()
        let result = try runPythonDriver(python, script: "wire_client.py",
                                         arguments: ["crash", String(nodes[0].port), String(nodes[0].process.processIdentifier)], environment: [:])
        #expect(result.status == 0, "crash mode failed:\n\(result.stdout)\n\(result.stderr)")
        _ = try nodes[0].waitForExit()
        try watcher.waitFor(#"data: {"path":"/","data":"offline"}"#)
        #expect(try curl("GET", nodes[2].baseURL + "/open/presence/me/state.json").body == #""offline""#)
        #expect(try curl("GET", nodes[2].baseURL + "/open/presence/me/cancelled.json").body == "null")
    }

    /// Node 0 paused (SIGSTOP) past its lease with 20 wire clients that registered an
    /// onDisconnect "offline" (wire_client.py `pause` checks the presence timeline a
    /// listener on node 1 heard): node 1 runs each operation exactly once; client 13, which
    /// reconnected to node 1 naming its old session, has its old "offline" run first and
    /// ends online; node 0, woken (SIGCONT), writes nothing for its old sessions, neither
    /// their operations nor the writes they sent while it was stopped; then it takes writes
    /// again under a new lease.
    @Test func aPausedNodeWakesAndWritesNothingForItsOldSessions() throws {
        let nodes = try Nodes()
        let watcher = try CurlStream(nodes[2].baseURL + "/open/presence.json")
        try watcher.waitFor("event: put\n")
        let python = try pythonInterpreter()
        let result = try runPythonDriver(python, script: "wire_client.py",
                                         arguments: ["pause", String(nodes[0].port), String(nodes[1].port), String(nodes[0].process.processIdentifier)],
                                         environment: [:])
        #expect(result.status == 0, "pause mode failed:\n\(result.stdout)\n\(result.stderr)")
        // Awake, it fenced itself; a write through it once it holds a lease again is queued
        // after everything it did for its old sessions.
        try nodes[0].waitForLog("holds a database lease again", count: 1)
        #expect(nodes[0].log.contains("could not renew its database lease in time"), "\(nodes[0].log)")
        try Self.checkPresence(heardBy: watcher, through: nodes[0], reader: nodes[2])
        #expect(try curl("GET", nodes[2].baseURL + "/open/ghost.json").body == "null")
    }

    /// The end of a presence scenario with 20 clients, 13 of which reconnected: a write
    /// through `node` (after all it did), then what `watcher` heard of `/open/presence`:
    /// each "offline" exactly once, 13's old "offline" before its new "online", and the
    /// final values read on `reader`.
    static func checkPresence(heardBy watcher: CurlStream, through node: HearthProcess, reader: HearthProcess) throws {
        #expect(try curl("PUT", node.baseURL + "/open/presence/marker.json", body: "true").status == 200)
        try watcher.waitFor(#"data: {"path":"/marker","data":true}"#)
        let heard = events(watcher.text).map { String($0.drop { $0 != " " }.dropFirst().drop { $0 != " " }.dropFirst()) }
        for i in 0..<20 {
            let offline = heard.filter { $0 == #"data: {"path":"/\#(i)","data":false}"# }.count
            #expect(offline == 1, "\(i): offline \(offline) times in \(heard)")
        }
        let thirteen = heard.filter { $0.hasPrefix(#"data: {"path":"/13","#) }
        #expect(thirteen.suffix(2) == [#"data: {"path":"/13","data":false}"#, #"data: {"path":"/13","data":true}"#], "\(heard)")
        for i in 0..<20 {
            #expect(try curl("GET", reader.baseURL + "/open/presence/\(i).json").body == (i == 13 ? "true" : "false"))
        }
    }
}

/// A node that loses the database while others keep it: a real cut, made by the
/// cluster's superuser (the node's own login role refused and its sessions ended).
@Suite(.enabled(if: PostgresTests.enabled)) struct NodeCutOffEndToEndTests {
    /// Node 0 is cut off while a wire-protocol client with an onDisconnect is connected to
    /// it and an SSE stream is open on it:
    /// - node 0 closes the client before node 1 runs the client's onDisconnect (the client
    ///   says "closed" through node 1, and node 1's listener hears that first);
    /// - node 1 goes on writing, past the change log's window (5 changes here);
    /// - back in touch, node 0 finds it missed changes and closes its stream, which would
    ///   otherwise go on without them; a new stream gets the whole value, and node 0
    ///   takes writes again.
    @Test func aNodeCutOffFromTheDatabaseFencesItselfAndItsStreamsStartOver() throws {
        let cluster = try PostgresCluster.shared()
        let url = try cluster.makeDatabase()
        let role = "hearth_cut_" + String(UInt64.random(in: 0...UInt64.max), radix: 16)
        try cluster.sql("CREATE ROLE \(role) LOGIN PASSWORD 'cut' IN ROLE hearth")
        // Same database, another login, acting as `hearth` once connected.
        let cutURL = url.replacingOccurrences(of: "//hearth:hearth@", with: "//\(role):cut@") + "?options=-c%20role%3Dhearth"
        let rules = #"{"rules": {".read": true, ".write": true}}"#
        let environment = ["HEARTH_CHANGE_LOG_RETENTION": "5"]
        let directories = (0..<2).map { _ in TemporaryDirectory() }
        let survivor = try MultiNodeEndToEndTests.Nodes.start(directories[1].path, url: url, rules: rules, environment: environment)
        let cut = try MultiNodeEndToEndTests.Nodes.start(directories[0].path, url: cutURL, rules: rules, environment: environment)
        let watcher = try CurlStream(survivor.baseURL + "/open.json")
        try watcher.waitFor("event: put\n")
        let stream = try CurlStream(cut.baseURL + "/feed.json")
        try stream.waitFor("event: put\n")

        let python = try pythonInterpreter()
        let client = Mutex<Result<DriverResult, any Error>?>(nil)
        let clientDone = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            let result = Result { try runPythonDriver(python, script: "wire_client.py", arguments: ["lease_cut", String(cut.port), String(survivor.port)],
                                                      environment: [:]) }
            client.withLock { $0 = result }
            clientDone.signal()
        }
        try watcher.waitFor(#"data: {"path":"/presence/me","data":"online"}"#)

        try cluster.sql("ALTER ROLE \(role) NOLOGIN")
        try cluster.sql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = '\(role)'")
        for i in 1...20 { #expect(try curl("PUT", survivor.baseURL + "/feed/a\(i).json", body: "\(i)").status == 200) }
        try watcher.waitFor(#"data: {"path":"/presence/me","data":"offline"}"#)
        let heard = MultiNodeEndToEndTests.events(watcher.text).map { String($0.drop { $0 != " " }.dropFirst().drop { $0 != " " }.dropFirst()) }
        let closedAt = heard.firstIndex(of: #"data: {"path":"/log/closed","data":"closed"}"#)
        let offlineAt = heard.firstIndex(of: #"data: {"path":"/presence/me","data":"offline"}"#)
        #expect(closedAt != nil && offlineAt != nil && closedAt! < offlineAt!, "\(heard)")
        #expect(clientDone.wait(timeout: .now() + HearthProcess.eventTimeout) == .success)
        let result = try #require(try client.withLock { $0 }?.get())
        #expect(result.status == 0, "lease_cut mode failed:\n\(result.stdout)\n\(result.stderr)")

        // Back in touch.
        try cluster.sql("ALTER ROLE \(role) LOGIN")
        _ = try stream.waitForExit()
        #expect(!stream.text.contains("a20"), "the stream was closed, not fed a partial history: \(stream.text)")
        let again = try CurlStream(cut.baseURL + "/feed.json")
        try again.waitFor(#""a20":20"#)
        // It refuses writes until it holds a lease again (taken as soon as the database answers).
        try cut.waitForLog("holds a database lease again", count: 1)
        #expect(try curl("PUT", cut.baseURL + "/feed/after.json", body: "21").status == 200)
        #expect(try curl("GET", survivor.baseURL + "/feed/after.json").body == "21")
        #expect(try curl("GET", survivor.baseURL + "/open/presence/me.json").body == #""offline""#)
        #expect(cut.log.contains("could not renew its database lease in time"), "\(cut.log)")
        #expect(cut.log.contains("this node missed changes 2..."), "\(cut.log)")
        // Why it could not is the first failure the node met, whichever came first: its
        // session ended by the superuser (the server's FATAL, or only the closed socket),
        // or its login refused when it connected again.
        let outage = cut.log.split(separator: "\n").first { $0.contains("the data store cannot be reached: ") }
        let causes = ["is not permitted to log in", "terminating connection due to administrator command", " failed (connection): "]
        #expect(outage.map { line in line.contains("(postgres ") && causes.contains { line.contains($0) } } == true,
                "why it could not, said: \(cut.log)")
    }
}

/// A node whose database goes silent (a proxy between it and
/// PostgreSQL holds every byte, so nothing is closed and TCP sees nothing wrong), while
/// another node keeps the database.
@Suite(.enabled(if: PostgresTests.enabled)) struct SilentDatabaseEndToEndTests {
    /// A fresh database, its URL through a `HoldingProxy`, and the proxy.
    static func proxiedDatabase() throws -> (url: String, proxied: String, proxy: HoldingProxy) {
        let cluster = try PostgresCluster.shared()
        let url = try cluster.makeDatabase()
        let proxy = try HoldingProxy(target: cluster.port)
        let proxied = url.replacingOccurrences(of: "127.0.0.1:\(cluster.port)/", with: "127.0.0.1:\(proxy.port)/")
        #expect(proxied != url)
        return (url, proxied, proxy)
    }

    /// - a write to the silent node is answered 503 with `Retry-After` (not held until the
    ///   database answers) and is not in the data;
    /// - `/readyz` answers within 2 s (curl's bound) that it is not ready;
    /// - once the node gave up its lease it refuses writes at once (503);
    /// - back in touch, it takes writes again under a new lease.
    @Test func aNodeWhoseDatabaseGoesSilentAnswersInTimeAndRefusesWritesWithoutItsLease() throws {
        let (url, proxied, proxy) = try Self.proxiedDatabase()
        defer { proxy.stop() }
        let rules = #"{"rules": {".read": true, ".write": true}}"#
        let directories = (0..<2).map { _ in TemporaryDirectory() }
        let survivor = try MultiNodeEndToEndTests.Nodes.start(directories[1].path, url: url, rules: rules)
        let silent = try MultiNodeEndToEndTests.Nodes.start(directories[0].path, url: proxied, rules: rules)
        #expect(try curl("PUT", silent.baseURL + "/before.json", body: "1").status == 200)

        proxy.hold = true
        let held = try curl("PUT", silent.baseURL + "/held.json", body: "2", maxSeconds: 15)
        #expect(held.status == 503, "\(held)")
        #expect(held.headers["retry-after"] == "1", "\(held)")
        // The client is told to try again; the operator reads why in the log.
        try silent.waitForLog("a write was answered 503, the store being unavailable: ", count: 1)
        let ready = try curl("GET", silent.baseURL + "/readyz", maxSeconds: 2)
        #expect(ready.status == 503, "\(ready)")
        try silent.waitForLog("could not renew its database lease in time", count: 1)
        let refused = try curl("PUT", silent.baseURL + "/refused.json", body: "3", maxSeconds: 15)
        #expect(refused.status == 503 && refused.headers["retry-after"] == "1", "\(refused)")

        proxy.hold = false
        try silent.waitForLog("holds a database lease again", count: 1)
        #expect(try curl("GET", silent.baseURL + "/readyz", maxSeconds: 2).status == 200)
        #expect(try curl("PUT", silent.baseURL + "/after.json", body: "4").status == 200)
        #expect(try curl("GET", survivor.baseURL + "/.json").body == #"{"after":4,"before":1}"#)
    }

    /// Three nodes; 20 wire clients with an onDisconnect "offline" on node 0, whose database
    /// then goes silent (wire_client.py `silent`): node 0 closes them (1001) without
    /// running their operations; node 1 runs each exactly once after node 0's lease ran
    /// out (client 13, which reconnected to node 1 naming its old session, has its "offline"
    /// run first and ends online); back in touch, node 0 writes nothing for them. The
    /// timeline is what a listener on node 2 heard.
    @Test func presenceRunsOnceWhenANodesDatabaseGoesSilent() throws {
        let (url, proxied, proxy) = try Self.proxiedDatabase()
        defer { proxy.stop() }
        let directories = (0..<3).map { _ in TemporaryDirectory() }
        let silent = try MultiNodeEndToEndTests.Nodes.start(directories[0].path, url: proxied, rules: HearthProcess.openRules)
        let others = try (1..<3).map { try MultiNodeEndToEndTests.Nodes.start(directories[$0].path, url: url, rules: HearthProcess.openRules) }
        let watcher = try CurlStream(others[1].baseURL + "/open/presence.json")
        try watcher.waitFor("event: put\n")

        let python = try pythonInterpreter()
        let client = Mutex<Result<DriverResult, any Error>?>(nil)
        let clientDone = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            let result = Result { try runPythonDriver(python, script: "wire_client.py", arguments: ["silent", String(silent.port), String(others[0].port)],
                                                      environment: [:]) }
            client.withLock { $0 = result }
            clientDone.signal()
        }
        let ready = try CurlStream(others[0].baseURL + "/open/ready.json")
        try ready.waitFor(#"data: {"path":"/","data":true}"#)
        proxy.hold = true
        #expect(clientDone.wait(timeout: .now() + HearthProcess.eventTimeout) == .success)
        let result = try #require(try client.withLock { $0 }?.get())
        #expect(result.status == 0, "silent mode failed:\n\(result.stdout)\n\(result.stderr)")
        for i in 0..<20 { try watcher.waitFor(#"data: {"path":"/\#(i)","data":false}"#) }

        proxy.hold = false
        try silent.waitForLog("holds a database lease again", count: 1)
        try MultiNodeEndToEndTests.checkPresence(heardBy: watcher, through: silent, reader: others[0])
    }
}

/// What one node decides about a user holds on the others at once (no
/// per-node cache of a user's status).
@Suite(.enabled(if: PostgresTests.enabled)) struct MultiNodeAccountsEndToEndTests {
    @Test func aUserDisabledThroughOneNodeIsRefusedByTheOthersAtOnce() throws {
        let rules = #"{"rules": {"users": {"$uid": {".read": "auth.uid === $uid", ".write": "auth.uid === $uid"}}}}"#
        let nodes = try MultiNodeEndToEndTests.Nodes(rules: rules)
        let signUp = try curl("POST", nodes[0].baseURL + "/v1/accounts:signUp", body: "{}", headers: ["Content-Type: application/json"])
        let body = json(signUp.body) as? [String: Any]
        let uid = try #require(body?["localId"] as? String), token = try #require(body?["idToken"] as? String)
        let auth = "Authorization: Bearer \(token)"
        #expect(try curl("PUT", nodes[1].baseURL + "/users/\(uid)/note.json", body: #""hi""#, headers: [auth]).status == 200)
        #expect(try curl("GET", nodes[2].baseURL + "/users/\(uid)/note.json", headers: [auth]).status == 200)
        // Disabled by an operator (the same setting as serve: --store), not through a node.
        let disabled = try run(HearthProcess.binaryPath, ["users", "disable", uid, "--store", nodes.url])
        #expect(disabled.status == 0, "\(disabled.output)")
        for node in 0..<3 {
            #expect(try curl("GET", nodes[node].baseURL + "/users/\(uid)/note.json", headers: [auth]).status == 401, "node \(node)")
        }
    }
}

/// `hearth copy` moves a SQLite store to PostgreSQL with nobody signed out.
@Suite(.enabled(if: PostgresTests.enabled)) struct StoreCopyEndToEndTests {
    @Test func aCopiedStoreServesTheSameDataAccountsAndTokens() throws {
        let dir = TemporaryDirectory()
        let rules = #"{"rules": {"users": {"$uid": {".read": "auth.uid === $uid", ".write": "auth.uid === $uid"}}, "open": {".read": true, ".write": true}}}"#
        let old = try HearthProcess.serve(dataDirectory: dir.path, rules: rules, environment: ["HEARTH_STORE": "sqlite:" + dir.path])
        let signUp = try curl("POST", old.baseURL + "/v1/accounts:signUp", body: #"{"email":"ada@example.com","password":"correct horse","returnSecureToken":true}"#,
                              headers: ["Content-Type: application/json"])
        let account = json(signUp.body) as? [String: Any]
        let uid = try #require(account?["localId"] as? String)
        let idToken = try #require(account?["idToken"] as? String), refresh = try #require(account?["refreshToken"] as? String)
        #expect(try curl("PUT", old.baseURL + "/users/\(uid)/favorites.json", body: #"{"oslo":{"name":"Oslo","note":"fjord"}}"#,
                         headers: ["Authorization: Bearer \(idToken)"]).status == 200)
        #expect(try curl("PUT", old.baseURL + "/open/ranked.json", body: #"{"a":{".value":1,".priority":2}}"#).status == 200)
        old.signal(SIGTERM)
        #expect(try old.waitForExit() == 0)

        let url = try PostgresCluster.shared().makeDatabase()
        let copied = try run(HearthProcess.binaryPath, ["copy", "--from", "sqlite:" + dir.path, "--to", url])
        #expect(copied.status == 0, "\(copied.output)")
        #expect(copied.output.contains("1 users, 1 refresh tokens, 1 signing keys"), "\(copied.output)")
        // A second copy into the same database is refused: it is not empty.
        let again = try run(HearthProcess.binaryPath, ["copy", "--from", "sqlite:" + dir.path, "--to", url])
        #expect(again.status != 0)

        let nodeDir = TemporaryDirectory()
        let node = try HearthProcess.serve(dataDirectory: nodeDir.path, rules: rules, environment: ["HEARTH_STORE": url])
        // The ID token issued before the move verifies (the keys moved), the data is there.
        let read = try curl("GET", node.baseURL + "/users/\(uid)/favorites/oslo/note.json", headers: ["Authorization: Bearer \(idToken)"])
        #expect(read.status == 200 && read.body == #""fjord""#, "\(read.status) \(read.body)")
        #expect(try curl("GET", node.baseURL + "/open/ranked.json?format=export").body == #"{"a":{".priority":2,".value":1}}"#)
        // The refresh token still works, and so does the password.
        let refreshed = try curl("POST", node.baseURL + "/v1/token", body: "grant_type=refresh_token&refresh_token=\(refresh)",
                                 headers: ["Content-Type: application/x-www-form-urlencoded"])
        #expect(refreshed.status == 200, "\(refreshed.body)")
        let signIn = try curl("POST", node.baseURL + "/v1/accounts:signInWithPassword",
                              body: #"{"email":"ada@example.com","password":"correct horse","returnSecureToken":true}"#, headers: ["Content-Type: application/json"])
        #expect(signIn.status == 200, "\(signIn.body)")
        // `hearth export` reads a PostgreSQL store through the engine.
        let exported = try run(HearthProcess.binaryPath, ["export", "--path", "/users/\(uid)/favorites", "--store", url])
        #expect(exported.status == 0)
        #expect(json(exported.output) as? NSDictionary == ["oslo": ["name": "Oslo", "note": "fjord"]] as NSDictionary, "\(exported.output)")
        // `hearth import` into PostgreSQL: validated as on SQLite, written through the engine
        // while the node runs (its streams hear of it like any write).
        let stream = try CurlStream(node.baseURL + "/open/imported.json")
        try stream.waitFor("event: put\n")
        let file = nodeDir.path + "/import.json"
        try #"{"list": ["a", "b"], "n": 1.0}"#.write(toFile: file, atomically: true, encoding: .utf8)
        let imported = try run(HearthProcess.binaryPath, ["import", file, "--path", "/open/imported", "--store", url])
        #expect(imported.status == 0 && imported.output.contains("imported 3 leaves"), "\(imported.output)")
        try stream.waitFor(#""data":{"list":["a","b"],"n":1}"#)
        #expect(try curl("GET", node.baseURL + "/open/imported.json").body == #"{"list":["a","b"],"n":1}"#)
        try #"{"bad.key": 1}"#.write(toFile: file, atomically: true, encoding: .utf8)
        let refused = try run(HearthProcess.binaryPath, ["import", file, "--path", "/open/imported", "--store", url])
        #expect(refused.status != 0)
        #expect(try curl("GET", node.baseURL + "/open/imported.json").body == #"{"list":["a","b"],"n":1}"#)  // nothing changed
    }
}

/// Backup, restore and users import of a PostgreSQL store through the engine protocol:
/// a backup has the same form as a SQLite store's and restores into either
/// engine.
@Suite(.enabled(if: PostgresTests.enabled)) struct PostgresBackupEndToEndTests {
    func hearth(_ arguments: [String]) throws -> (status: Int32, output: String, error: String) {
        try runHearth(arguments)
    }

    @Test func aPostgreSQLStoreIsBackedUpWhileServingAndRestoredIntoEitherEngine() throws {
        let cluster = try PostgresCluster.shared()
        let url = try cluster.makeDatabase()
        let dir = TemporaryDirectory()
        // More users than one page of StoreTransfer.pageSize (1,000), imported straight
        // into PostgreSQL, all in one transaction.
        let imported = 1_001
        let users = (0..<imported).map { #"{"localId":"imported\#($0)","createdAt":"1600000000000"}"# }
        let file = dir.path + "/users.json"
        try (#"{"users": ["# + users.joined(separator: ",") + "]}").write(toFile: file, atomically: true, encoding: .utf8)
        let importUsers = try hearth(["users", "import", file, "--store", url])
        #expect(importUsers.status == 0 && importUsers.output.contains("imported \(imported) users"), "\(importUsers.output)\(importUsers.error)")
        // The same file again: every uid is taken, nothing is imported.
        let duplicate = try hearth(["users", "import", file, "--store", url])
        #expect(duplicate.status == 1 && duplicate.error.contains("imported0 already exists"), "\(duplicate.error)")

        let rules = #"{"rules": {"users": {"$uid": {".read": "auth.uid === $uid", ".write": "auth.uid === $uid"}}, "open": {".read": true, ".write": true, "many": {".indexOn": ["n"]}}}}"#
        let node = try HearthProcess.serve(dataDirectory: dir.path, rules: rules, environment: ["HEARTH_STORE": url])
        let signUp = try curl("POST", node.baseURL + "/v1/accounts:signUp", body: #"{"email":"ada@example.com","password":"correct horse","returnSecureToken":true}"#,
                              headers: ["Content-Type: application/json"])
        let account = json(signUp.body) as? [String: Any]
        let uid = try #require(account?["localId"] as? String)
        let idToken = try #require(account?["idToken"] as? String)
        #expect(try curl("PUT", node.baseURL + "/users/\(uid)/favorites.json", body: #"{"oslo":{"name":"Oslo","note":"fjord"}}"#,
                         headers: ["Authorization: Bearer \(idToken)"]).status == 200)
        #expect(try curl("PUT", node.baseURL + "/open/ranked.json", body: #"{"a":{".value":1,".priority":2}}"#).status == 200)
        // More leaves than one page of TreeExport.pageRows (1,000), nested two deep.
        let many = (0..<1_200).map { #""k\#($0)":{"n":\#($0),"s":"v\#($0)"}"# }.joined(separator: ",")
        #expect(try curl("PUT", node.baseURL + "/open/many.json", body: "{" + many + "}").status == 200)

        // An indexed query (backups with an index), answered the same after each
        // restore below.
        let ordered = "/open/many.json?orderBy=%22n%22&limitToLast=3"
        let indexedAnswer = try curl("GET", node.baseURL + ordered).body
        #expect(json(indexedAnswer) as? NSDictionary == ["k1197": ["n": 1197, "s": "v1197"], "k1198": ["n": 1198, "s": "v1198"], "k1199": ["n": 1199, "s": "v1199"]])
        #expect(try curl("GET", node.baseURL + ordered).body == indexedAnswer)

        // Backed up while the node serves; a write after it is not in the backup.
        let backup = dir.path + "/backup"
        let made = try hearth(["backup", backup, "--store", url])
        #expect(made.status == 0 && made.output.contains("\(imported + 1) users"), "\(made.output)\(made.error)")
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: backup)) == ["hearth.sqlite", "keys"])
        #expect(try hearth(["backup", backup, "--store", url]).status == 1, "an existing backup is not overwritten")
        #expect(try curl("PUT", node.baseURL + "/open/later.json", body: "1").status == 200)

        // Into a fresh PostgreSQL database: the data, the accounts and the keys.
        let restoredURL = try cluster.makeDatabase()
        let restored = try hearth(["restore", backup, "--store", restoredURL])
        #expect(restored.status == 0 && restored.output.contains("\(imported + 1) users"), "\(restored.output)\(restored.error)")
        let again = try hearth(["restore", backup, "--store", restoredURL])
        #expect(again.status == 1 && again.error.contains("not empty"), "\(again.error)")
        #expect(try hearth(["restore", backup, "--store", restoredURL, "--force"]).status == 1)
        let restoredDir = TemporaryDirectory()
        let restoredNode = try HearthProcess.serve(dataDirectory: restoredDir.path, rules: rules, environment: ["HEARTH_STORE": restoredURL])
        let read = try curl("GET", restoredNode.baseURL + "/users/\(uid)/favorites/oslo/note.json", headers: ["Authorization: Bearer \(idToken)"])
        #expect(read.status == 200 && read.body == #""fjord""#, "the ID token verifies (the keys came along): \(read.status) \(read.body)")
        #expect(try curl("GET", restoredNode.baseURL + "/open/ranked.json?format=export").body == #"{"a":{".priority":2,".value":1}}"#)
        let signIn = try curl("POST", restoredNode.baseURL + "/v1/accounts:signInWithPassword",
                              body: #"{"email":"ada@example.com","password":"correct horse","returnSecureToken":true}"#, headers: ["Content-Type: application/json"])
        #expect(signIn.status == 200, "\(signIn.body)")
        #expect(try curl("GET", restoredNode.baseURL + ordered).body == indexedAnswer)
        let listed = try hearth(["users", "export", "--store", restoredURL])
        #expect(listed.output.components(separatedBy: "\"localId\"").count - 1 == imported + 1)

        // Into a SQLite data directory, the same backup.
        let sqlite = TemporaryDirectory()
        let intoSQLite = try hearth(["restore", backup, "--data-dir", sqlite.path])
        #expect(intoSQLite.status == 0, "\(intoSQLite.error)")
        let sqliteNode = try HearthProcess.serve(dataDirectory: sqlite.path, rules: rules, environment: ["HEARTH_STORE": "sqlite:" + sqlite.path])
        let fromSQLite = try curl("GET", sqliteNode.baseURL + "/users/\(uid)/favorites/oslo/note.json", headers: ["Authorization: Bearer \(idToken)"])
        #expect(fromSQLite.status == 200 && fromSQLite.body == #""fjord""#, "\(fromSQLite.status) \(fromSQLite.body)")
        #expect(try curl("GET", sqliteNode.baseURL + ordered).body == indexedAnswer)

        // `hearth export` pages through a PostgreSQL store and gives the same bytes as from
        // SQLite for the same data: the whole tree, a subtree, a leaf, a missing path.
        for path in ["/", "/open/many", "/open/many/k7/s", "/nothing"] {
            let fromPostgres = try hearth(["export", "--path", path, "--store", restoredURL])
            let fromFile = try hearth(["export", "--path", path, "--data-dir", sqlite.path])
            #expect(fromPostgres.status == 0 && fromFile.status == 0, "\(fromPostgres.error)\(fromFile.error)")
            #expect(fromPostgres.output == fromFile.output, "\(path)")
        }
        #expect(try hearth(["export", "--path", "/open/many/k7/s", "--store", restoredURL]).output == "\"v7\"\n")
        let whole = try hearth(["export", "--path", "/open/many", "--store", restoredURL]).output
        #expect((json(whole) as? [String: Any])?.count == 1_200)

        // The SQLite node builds its index on that query; a backup of it checks and restores.
        #expect(try curl("PUT", sqliteNode.baseURL + "/open/marker.json", body: "1").status == 200)
        let sqliteBackup = dir.path + "/sqlite-backup"
        let second = try hearth(["backup", sqliteBackup, "--data-dir", sqlite.path])
        #expect(second.status == 0, "\(second.error)")
        let rows = try MigrationEndToEndTests.sqlite(sqliteBackup + "/hearth.sqlite", "SELECT count(*) FROM query_index")
        #expect(rows == "1200")
        let roundTrip = try PostgresCluster.shared().makeDatabase()
        #expect(try hearth(["restore", sqliteBackup, "--store", roundTrip]).status == 0)
        #expect(try hearth(["export", "--path", "/open/many", "--store", roundTrip]).output == whole)
    }
}
