import Foundation
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A stuck event seen and set aside, and delivery resuming after a receiver outage, against
/// the built `hearth serve --triggers` on the test store (SQLite, or PostgreSQL with
/// HEARTH_TEST_STORE=postgres): `hearth triggers list` names each trigger's oldest pending
/// event, `park` moves it to the dead letters (per namespace, `--ns`), `resend` brings it
/// back under the same id; refused attempts stay at the short interval.
@Suite struct TriggersParkEndToEndTests {
    static let namespace = TriggersNamespaceEndToEndTests.namespace

    /// `items` (retried) fires in every namespace; `shop-eu` is the second namespace.
    static func files(port: Int, in directory: String) throws -> (triggers: String, namespaces: String) {
        let triggers = directory + "/triggers.json"
        try #"{"triggers": [{"name": "items", "event": "written", "ref": "/items/{id}", "url": "http://127.0.0.1:\#(port)/items", "retry": true}]}"#
            .write(toFile: triggers, atomically: true, encoding: .utf8)
        return (triggers, try TriggersNamespaceEndToEndTests.namespacesFile(in: directory))
    }

    @Test func aStuckEventIsNamedParkedAndResentThroughTheCLI() throws {
        let directory = TemporaryDirectory(), work = TemporaryDirectory()
        // The receiver fails the poison event until it is fixed; others are answered 200.
        let fixed = Mutex(false)
        let received = Mutex<[ReceivedRequest]>([])
        let receiver = try LoopbackListener { socket in
            guard let request = socket.readRequest() else { return }
            received.withLock { $0.append(request) }
            let poison = request.header("ce-ref") == "items/poison"
            try? socket.respond(poison && !fixed.withLock({ $0 }) ? 500 : 200)
        }
        defer { receiver.stop() }
        func refs() -> [String] { received.withLock { $0.compactMap { $0.header("ce-ref") } } }
        let (triggers, namespaces) = try Self.files(port: receiver.port, in: work.path)
        let server = try HearthProcess.serve(dataDirectory: directory.path,
                                             environment: ["HEARTH_TRIGGERS": triggers, "HEARTH_NAMESPACES_FILE": namespaces])
        let store = try TriggersOperatorEndToEndTests.storeArguments(directory.path)
        let eu = store + ["--ns", Self.namespace]
        let lines = TriggersOperatorEndToEndTests.lines
        #expect(try liveRequest(port: server.port, "PUT", "/items/poison.json?ns=\(Self.namespace)", body: "1").status == 200)
        #expect(try liveRequest(port: server.port, "PUT", "/items/ok.json?ns=\(Self.namespace)", body: "2").status == 200)

        // list --ns names the oldest pending event: id, ref, attempts, last error.
        var row: [String] = []
        try waitUntil("the failing oldest event") {
            row = lines(try runHearth(["triggers", "list", "--triggers", triggers] + eu).output).first ?? []
            return row.count == 13 && row[11] != "0" && row[11] != "-"
        }
        let id = row[9]
        #expect(Int(id) != nil && row[10] == "/items/poison" && row[12] == "HTTP 500", "\(row)")
        let defaultRow = lines(try runHearth(["triggers", "list", "--triggers", triggers] + store).output).first ?? []
        #expect(defaultRow.count == 13 && defaultRow[4] == "0" && defaultRow[9...] == ["-", "-", "-", "-"], "\(defaultRow)")

        // park: not in the default namespace (no such pending event there); in shop-eu, the
        // unknown id is reported, the other still moved.
        let elsewhere = try runHearth(["triggers", "park", id] + store)
        #expect(elsewhere.status == 1 && elsewhere.output == "parked 0 event(s)\n" && elsewhere.error.contains("not pending events: \(id)"))
        let parked = try runHearth(["triggers", "park", id, "999999"] + eu)
        #expect(parked.status == 1 && parked.output == "parked 1 event(s)\n" && parked.error.contains("not pending events: 999999"), "\(parked)")
        let none = try runHearth(["triggers", "park"] + eu)
        #expect(none.status != 0 && none.error.contains("ids"))

        // The event behind it goes on; the parked one is a dead letter as it was.
        try waitUntil("the next event's delivery") { refs().contains("items/ok") }
        let dead = lines(try runHearth(["triggers", "dead"] + eu).output)
        #expect(dead.count == 1 && dead[0][0] == id && dead[0][2] == "/items/poison" && dead[0][3] == "parked by an operator"
                && Int(dead[0][4]).map { $0 >= 1 } == true && dead[0][5] == "HTTP 500", "\(dead)")
        let attemptsBefore = refs().filter { $0 == "items/poison" }.count

        // resend: the fixed receiver gets it, under the same id.
        fixed.withLock { $0 = true }
        let resent = try runHearth(["triggers", "resend", id] + eu)
        #expect(resent.status == 0 && resent.output == "resent 1 dead letter(s)\n")
        try waitUntil("the resent delivery") { refs().filter { $0 == "items/poison" }.count == attemptsBefore + 1 }
        let ids = Set(received.withLock { $0.filter { $0.header("ce-ref") == "items/poison" }.compactMap { $0.header("ce-id") } })
        #expect(ids.count == 1 && ids.first?.hasSuffix("-\(id)") == true, "\(ids)")
        try waitUntil("an empty backlog") {
            let after = lines(try runHearth(["triggers", "list", "--triggers", triggers] + eu).output).first ?? []
            return after.count == 13 && after[4] == "0" && after[9] == "-"
        }
        // Delivered: no longer pending, so it cannot be parked.
        #expect(try runHearth(["triggers", "park", id] + eu).status == 1)
        server.signal(SIGTERM)
        #expect(try server.waitForExit() == 0)
    }

    /// The failed-attempt counter of `trigger` in the server's metrics.
    static func failedAttempts(_ port: Int, _ trigger: String) throws -> Int {
        let prefix = #"hearth_trigger_failed_attempts_total{namespace="(default)",trigger="\#(trigger)"} "#
        let metrics = try liveRequest(port: port, "GET", "/metrics").body
        return metrics.split(separator: "\n").first { $0.hasPrefix(prefix) }.flatMap { Int($0.dropFirst(prefix.count)) } ?? 0
    }

    /// The receiver (the real SDK under the Functions Framework) is down for many refused
    /// attempts, each at the short interval (the old backoff would have grown past 30 s
    /// after six, past 8 min after ten), none counted; once it listens, the events go
    /// through.
    @Test func deliveryResumesAfterAReceiverOutage() throws {
        let python = try pythonInterpreter()
        let dir = TemporaryDirectory(), work = TemporaryDirectory()
        let refusing = try RefusingPort()  // nobody listens yet
        let port = refusing.port
        let triggers = try TriggersEndToEndTests.triggersFile(port: port, in: work.path)
        let count = 3
        let server = try TriggersEndToEndTests.serveWithFavorites(dir.path, triggers: triggers, count: count)
        let refused = 12
        try waitUntil("\(refused) refused attempts") { try Self.failedAttempts(server.port, "fav_written") >= refused }
        let store = try TriggersOperatorEndToEndTests.storeArguments(dir.path)
        let rows = TriggersOperatorEndToEndTests.lines(try runHearth(["triggers", "list", "--triggers", triggers] + store).output)
        let written = try #require(rows.first { $0.first == "fav_written" })
        // Refused attempts are not counted: the backoff did not grow.
        #expect(written.count == 13 && written[4] == String(count) && written[11] == "0" && written[12] == "connection refused", "\(written)")

        refusing.release()
        let functions = try FunctionsFramework(python: python, directory: work.path, port: port)
        // Per favorite: created and written.
        let calls = try functions.waitFor(count * 2, "every event")
        let order = calls.filter { $0["kind"] as? String == "written" }.compactMap { ($0["params"] as? [String: String])?["favId"] }
        // Each favourite is a location of its own, so they go at once, in any order: each
        // exactly once is what holds.
        #expect(order.sorted() == (0..<count).map { "f\($0)" })
        server.signal(SIGTERM)
        #expect(try server.waitForExit() == 0)
    }
}
