import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The loop guard end to end: a real firebase-functions function under
/// the Functions Framework writes back into its own trigger's path through firebase-admin,
/// 50 children per event. The server stays healthy (other writes and reads served), the
/// guard trips (dead letters "rate limited", `hearth_trigger_rate_limited_total`), and the
/// events it let through stay within its bound: burst + rate x elapsed.
@Suite struct TriggersLoopEndToEndTests {
    /// The trigger's `maxEventsPerSecond` (its burst: `TriggerLimits.rateBurstSeconds`,
    /// 10 s, worth).
    static let (rate, burst) = (200, 2000)

    static func metric(_ text: String, _ name: String) -> Double {
        let prefix = name + #"{namespace="(default)",trigger="loop"} "#
        return text.split(separator: "\n").first { $0.hasPrefix(prefix) }.flatMap { Double($0.dropFirst(prefix.count)) } ?? 0
    }

    @Test func aFunctionWritingBackToItsOwnPathIsBounded() throws {
        let python = try pythonInterpreter()
        let directory = TemporaryDirectory()
        // Held (refusing) until the function starts: events sent before go nowhere else.
        let functionHeld = try RefusingPort()
        let functionPort = functionHeld.port
        let triggers = directory.path + "/triggers.json"
        try #"{"triggers": [{"name": "loop", "event": "written", "ref": "/loop/{id}", "url": "http://127.0.0.1:\#(functionPort)/", "maxEventsPerSecond": \#(Self.rate)}]}"#
            .write(toFile: triggers, atomically: true, encoding: .utf8)
        let started = ContinuousClock.now
        let rulesPath = try HearthProcess.writeRules(HearthProcess.openRules, in: directory.path)
        var environment = ["HEARTH_TRIGGERS": triggers]
        if let url = try TestStore.postgresURL(for: directory.path) { environment["HEARTH_STORE"] = url }
        let server = try HearthProcess(arguments: ["serve", "--port", "0", "--data-dir", directory.path, "--rules", rulesPath,
                                                   "--accept-emulator-owner", "--project-id", "demo-proj"],  // the function's databaseURL names demo-proj's default database
                                       dataDirectory: directory.path, environment: environment)
        try server.waitUntilListening()

        functionHeld.release()
        let function = ChildProcess()
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Python/trigger_loop.py").path
        defer { if function.isRunning { function.signal(SIGKILL); function.waitUntilExit() } }
        _ = try FunctionsFrameworkChild.start(function, python: python, script: script, target: "loop", signatureType: "cloudevent",
                                              port: functionPort, environment: ["FIREBASE_DATABASE_EMULATOR_HOST": "127.0.0.1:\(server.port)"],
                                              directory: directory.path)

        // The first event: write until one delivery is counted (with retry false a delivery
        // that failed is not tried again).
        try waitUntil("the loop running", within: 300) {
            _ = try liveRequest(port: server.port, "PUT", "/loop/seed.json", body: "\(Int.random(in: 0..<1_000_000))")
            let metrics = try liveRequest(port: server.port, "GET", "/metrics").body
            return Self.metric(metrics, "hearth_trigger_delivered_total") > 0
        }
        // Tripped, and for a while: more events refused than the burst lets through at once.
        try waitUntil("the guard tripping", within: 300) {
            Self.metric(try liveRequest(port: server.port, "GET", "/metrics").body, "hearth_trigger_rate_limited_total") >= Double(Self.burst)
        }
        // The server serves everyone else meanwhile.
        #expect(try liveRequest(port: server.port, "GET", "/healthz").status == 200)
        #expect(try liveRequest(port: server.port, "PUT", "/other.json", body: #""still here""#).status == 200)
        #expect(try liveRequest(port: server.port, "GET", "/other.json").body == #""still here""#)

        // Stop the function: every pending event ends delivered or dead (retry false).
        function.signal(SIGKILL)
        function.waitUntilExit()
        var metrics = ""
        // Every wait here is bounded generously: the function (Python) and the server share
        // a machine that, in CI, runs other suites' servers and functions at once. Up to
        // thousands of events are pending when the function dies, each then tried once and
        // dead-lettered.
        try waitUntil("an empty outbox", within: 300) {
            metrics = try liveRequest(port: server.port, "GET", "/metrics").body
            return metrics.contains(#"hearth_trigger_pending{namespace="(default)",trigger="loop"} 0.0"#)
        }
        // The bound holds at every moment, so it is taken when the figures are read. Not
        // when the function was killed: that kills the Functions Framework's gunicorn
        // arbiter, and its worker, orphaned, goes on serving (in one run, still answering
        // 60 events a second 22 s later), each event writing 50 more children, which the
        // guard counts.
        let elapsed = ContinuousClock.now - started
        let delivered = Self.metric(metrics, "hearth_trigger_delivered_total")
        let dead = Self.metric(metrics, "hearth_trigger_dead_total")
        let limited = Self.metric(metrics, "hearth_trigger_rate_limited_total")
        // Recorded = delivered + dead; the guard let through at most burst + rate x elapsed
        // (+ the seed writes, which the guard counted too).
        let admitted = delivered + dead - limited
        let bound = Double(Self.burst) + Double(Self.rate) * (Double(elapsed.components.seconds) + 1)
        #expect(limited > 0 && admitted <= bound, "delivered \(delivered), dead \(dead), rate limited \(limited), bound \(bound)")
        let deadLetters = try runHearth(["triggers", "dead", "--trigger", "loop", "--limit", "100000"] + TriggersOperatorEndToEndTests.storeArguments(directory.path))
        #expect(deadLetters.output.contains("\trate limited\t"))
        #expect(server.log.contains("trigger loop records events faster than \(Self.rate)/s"))
        server.signal(SIGTERM)
        #expect(try server.waitForExit() == 0)
    }
}
