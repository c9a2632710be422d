import Foundation
import Synchronization
import Testing

/// A receiver of trigger deliveries on port 0: answers with `answers` in turn (then 200)
/// and keeps what it got.
final class TriggerReceiver: Sendable {
    private let requests = Mutex<[ReceivedRequest]>([])
    private let answers: Mutex<[Int]>
    private let listener = Mutex<LoopbackListener?>(nil)

    init(answers: [Int] = []) throws {
        self.answers = Mutex(answers)
        let listener = try LoopbackListener { [weak self] socket in
            guard let request = socket.readRequest(), let self else { return }
            let status = self.answers.withLock { $0.isEmpty ? 200 : $0.removeFirst() }
            self.requests.withLock { $0.append(request) }
            try? socket.respond(status)
        }
        self.listener.withLock { $0 = listener }
    }

    var port: Int { listener.withLock { $0?.port ?? 0 } }
    var received: [ReceivedRequest] { requests.withLock { $0 } }

    /// The refs of the deliveries answered 2xx or not, in order.
    var refs: [String] { received.compactMap { $0.header("ce-ref") } }

    func stop() { listener.withLock { $0 }?.stop() }
}

/// Waits until `condition` holds, at most `seconds` (a safety net, 60 by default).
func waitUntil(_ what: String, within seconds: Int = 60, _ condition: () throws -> Bool) throws {
    let deadline = ContinuousClock.now + .seconds(seconds)
    while try !condition() {
        guard ContinuousClock.now < deadline else { throw LiveClientError("timed out waiting for \(what)") }
        Thread.sleep(forTimeInterval: 0.02)
    }
}

/// `hearth triggers list|dead|resend` against a running `hearth serve --triggers`,
/// on the test store (SQLite, or PostgreSQL with HEARTH_TEST_STORE=postgres), and
/// the triggers' metrics after real deliveries and failures.
@Suite struct TriggersOperatorEndToEndTests {
    static let headerSecret = "Bearer header-secret-value-1"
    static let hmacSecret = "hmac-secret-value-0123456789"

    /// `flaky` makes one attempt (its receiver answers 500 once); `steady` retries and sends secrets.
    static func triggersFile(port: Int, in directory: String) throws -> String {
        let path = directory + "/triggers.json"
        try """
        {"triggers": [
          {"name": "flaky", "event": "written", "ref": "/items/{id}", "url": "http://127.0.0.1:\(port)/flaky?token=query-secret", "retry": false},
          {"name": "steady", "event": "created", "ref": "/logs/{id}", "url": "http://127.0.0.1:\(port)/steady", "retry": true,
           "headers": {"Authorization": "\(headerSecret)"}, "hmacSecret": "\(hmacSecret)"}
        ]}
        """.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// The store options a CLI command needs to reach the server's data.
    static func storeArguments(_ directory: String) throws -> [String] {
        if let url = try TestStore.postgresURL(for: directory) { return ["--store", url] }
        return ["--data-dir", directory]
    }

    static func lines(_ output: String) -> [[String]] {
        output.split(separator: "\n").map { $0.split(separator: "\t", omittingEmptySubsequences: false).map(String.init) }
    }

    @Test func listDeadAndResendWhileTheServerRuns() throws {
        let directory = TemporaryDirectory()
        let receiver = try TriggerReceiver(answers: [500])
        defer { receiver.stop() }
        let triggers = try Self.triggersFile(port: receiver.port, in: directory.path)
        let server = try HearthProcess.serve(dataDirectory: directory.path, environment: ["HEARTH_TRIGGERS": triggers])
        let store = try Self.storeArguments(directory.path)

        #expect(try liveRequest(port: server.port, "PUT", "/items/a.json", body: "1").status == 200)
        try waitUntil("the failed attempt") { receiver.received.count == 1 }
        #expect(try liveRequest(port: server.port, "PUT", "/logs/l1.json", body: #""hello""#).status == 200)
        try waitUntil("the steady delivery") { receiver.refs.contains("logs/l1") }

        // dead: the failed event, with its reason and attempt.
        var dead: [[String]] = []
        try waitUntil("the dead letter") {
            let result = try runHearth(["triggers", "dead"] + store)
            dead = Self.lines(result.output)
            return result.status == 0 && dead.count == 1
        }
        #expect(dead[0].count == 7)
        #expect(dead[0][1] == "flaky" && dead[0][2] == "/items/a" && dead[0][3].contains("HTTP 500") && dead[0][4] == "0")
        #expect(try runHearth(["triggers", "dead", "--trigger", "steady"] + store).output.isEmpty)

        // list: both triggers, the dead count, and no secret anywhere.
        let list = try runHearth(["triggers", "list", "--triggers", triggers] + store)
        #expect(list.status == 0)
        let rows = Self.lines(list.output)
        #expect(rows.map { $0.first ?? "" } == ["flaky", "steady"])
        #expect(rows[0].count == 13 && rows[0].prefix(7) == ["flaky", "written", "/items/{id}", "http://127.0.0.1:\(receiver.port)/flaky", "0", "-", "1"])
        #expect(rows[0][8] == "-")
        // Stored bytes (the dead letter's payload) of the default budget, 64 MiB.
        #expect(rows[0][7].hasSuffix("/67108864") && rows[0][7] != "0/67108864")
        #expect(rows[1].prefix(7) == ["steady", "created", "/logs/{id}", "http://127.0.0.1:\(receiver.port)/steady", "0", "-", "0"])
        for secret in [Self.headerSecret, Self.hmacSecret, "query-secret"] { #expect(!list.output.contains(secret)) }

        // Bad uses are refused clearly.
        let unknown = try runHearth(["triggers", "resend", "999999"] + store)
        #expect(unknown.status == 1 && unknown.output == "resent 0 dead letter(s)\n" && unknown.error.contains("not dead letters"))
        let neither = try runHearth(["triggers", "resend"] + store)
        #expect(neither.status != 0 && neither.error.contains("--all"))
        #expect(try runHearth(["triggers", "dead", "--limit", "0"] + store).error.contains("--limit"))

        // resend: the running server delivers it (its receiver now answers 200).
        let resent = try runHearth(["triggers", "resend", dead[0][0]] + store)
        #expect(resent.status == 0 && resent.output == "resent 1 dead letter(s)\n")
        try waitUntil("the resent event's delivery") { receiver.refs.filter { $0 == "items/a" }.count == 2 }
        let idsOfA = receiver.received.filter { $0.header("ce-ref") == "items/a" }.compactMap { $0.header("ce-id") }
        #expect(Set(idsOfA).count == 1)  // the same event, the same id
        #expect(try runHearth(["triggers", "dead"] + store).output.isEmpty)

        // The metrics: per trigger, after one failure, one dead letter and two deliveries.
        var metrics = ""
        try waitUntil("the counters") {
            metrics = try liveRequest(port: server.port, "GET", "/metrics").body
            return metrics.contains(#"hearth_trigger_delivered_total{namespace="(default)",trigger="flaky"} 1"#)
        }
        for line in [#"hearth_trigger_failed_attempts_total{namespace="(default)",trigger="flaky"} 1"#, #"hearth_trigger_dead_total{namespace="(default)",trigger="flaky"} 1"#,
                     #"hearth_trigger_delivered_total{namespace="(default)",trigger="steady"} 1"#, #"hearth_trigger_pending{namespace="(default)",trigger="flaky"} 0.0"#,
                     #"hearth_trigger_oldest_pending_age_seconds{namespace="(default)",trigger="steady"} 0.0"#,
                     #"hearth_trigger_dead_total{namespace="(default)",trigger="steady"} 0"#, #"hearth_trigger_rate_limited_total{namespace="(default)",trigger="flaky"} 0"#] {
            #expect(metrics.contains(line), "\(line)")
        }
        server.signal(SIGTERM)
        #expect(try server.waitForExit() == 0)
    }

    /// `resend --all --trigger` moves only that trigger's; the backlog shows in `list`
    /// while nobody delivers (no server), with the oldest pending event's age.
    @Test func resendAllAndTheBacklogWithoutAServer() throws {
        let directory = TemporaryDirectory()
        let refusing = try RefusingPort()  // nobody listens: every attempt is refused
        defer { refusing.release() }  // held (and refusing) to the end
        let triggers = try Self.triggersFile(port: refusing.port, in: directory.path)
        let server = try HearthProcess.serve(dataDirectory: directory.path, environment: ["HEARTH_TRIGGERS": triggers])
        let store = try Self.storeArguments(directory.path)
        for index in 0..<3 {
            #expect(try liveRequest(port: server.port, "PUT", "/items/i\(index).json", body: "1").status == 200)
        }
        #expect(try liveRequest(port: server.port, "PUT", "/logs/l1.json", body: "1").status == 200)
        try waitUntil("three dead letters") { Self.lines(try runHearth(["triggers", "dead"] + store).output).count == 3 }
        try waitUntil("steady's failure") { Self.lines(try runHearth(["triggers", "list", "--triggers", triggers] + store).output).last?.last != "-" }
        server.signal(SIGTERM)
        #expect(try server.waitForExit() == 0)

        let rows = Self.lines(try runHearth(["triggers", "list", "--triggers", triggers] + store).output)
        #expect(rows[0][0] == "flaky" && rows[0][4] == "0" && rows[0][6] == "3")
        #expect(rows[1][0] == "steady" && rows[1][4] == "1" && Int(rows[1][5]) != nil && rows[1][8] == "connection refused")
        // Without --triggers: only the names with a backlog or dead letters, undeclared.
        let bare = Self.lines(try runHearth(["triggers", "list"] + store).output)
        #expect(bare.map { [$0[0], $0[1], $0[4], $0[6]] } == [["flaky", "-", "0", "3"], ["steady", "-", "1", "0"]])

        let missing = try runHearth(["triggers", "list", "--triggers", directory.path + "/nope.json"] + store)
        #expect(missing.status == 1 && missing.error.contains("nope.json: cannot be read") && missing.output.isEmpty)
        let none = try runHearth(["triggers", "resend", "--all", "--trigger", "steady"] + store)
        #expect(none.status == 0 && none.output == "resent 0 dead letter(s)\n")
        let all = try runHearth(["triggers", "resend", "--all", "--trigger", "flaky"] + store)
        #expect(all.status == 0 && all.output == "resent 3 dead letter(s)\n")
        let after = Self.lines(try runHearth(["triggers", "list", "--triggers", triggers] + store).output)
        #expect(after[0][4] == "3" && after[0][6] == "0")
        #expect(try runHearth(["triggers", "dead", "--limit", "1"] + store).output.isEmpty)
    }
}
