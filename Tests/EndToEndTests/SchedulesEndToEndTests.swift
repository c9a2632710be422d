import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `Python/schedule_functions.py` (firebase-functions' `scheduler_fn.on_schedule`) under the
/// open-source Functions Framework (`FunctionsFrameworkChild`: `init` returns once it
/// listens); what the function received is read from the JSON lines it appends to a file.
final class ScheduledFunction {
    let process = ChildProcess()
    let port: Int
    let outFile: String
    /// The framework's output.
    let log: String

    init(python: String, directory: String) throws {
        port = try freeLoopbackPort()
        outFile = directory + "/ticks.jsonl"
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Python/schedule_functions.py").path
        log = try FunctionsFrameworkChild.start(process, python: python, script: script, target: "tick", signatureType: "http",
                                                port: port, environment: ["HEARTH_SCHEDULE_OUT": outFile], directory: directory)
    }

    /// Each call: the job name and the schedule time the SDK read.
    var calls: [(job: String, time: String)] {
        let text = (try? String(contentsOfFile: outFile, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { return nil }
            return ((object["job"] as? String) ?? "", (object["time"] as? String) ?? "")
        }
    }

    /// Waits until `count` calls were recorded; the safety net is past `count` due times
    /// of an every-minute schedule (the first up to 60 s away) with room for a loaded machine.
    /// A failure shows the framework's log and the end of each of `nodes`' output.
    func waitFor(_ count: Int, nodes: [HearthProcess] = []) throws -> [(job: String, time: String)] {
        let deadline = ContinuousClock.now + .seconds(60 * count + 40)
        while true {
            let calls = self.calls
            if calls.count >= count { return calls }
            guard ContinuousClock.now < deadline else {
                let logs = nodes.enumerated().map { "node \($0.offset + 1)'s output:\n\($0.element.log.suffix(4_000))" }
                throw LiveClientError((["\(calls.count) of \(count) scheduled calls: \(calls)",
                                        "the framework's log:\n\(FunctionsFrameworkChild.tail(of: log))"] + logs).joined(separator: "\n"))
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }

    deinit {
        if process.isRunning {
            process.signal(SIGKILL)
            process.waitUntilExit()
        }
    }
}

/// Scheduled functions end to end: `hearth serve --triggers` with a schedule invokes the real
/// `scheduler_fn.on_schedule` function once per due time, through a SIGKILL and a downtime
/// (the missed due time runs once at start), and on two nodes of one PostgreSQL database.
/// Each test sees two due times of an every-minute schedule (cron's finest), so it runs
/// about two minutes.
@Suite struct SchedulesEndToEndTests {
    static func triggersFile(port: Int, in directory: String) throws -> String {
        let path = directory + "/triggers.json"
        try #"{"triggers": [{"name": "tick", "schedule": "* * * * *", "url": "http://127.0.0.1:\#(port)/", "retry": true, "timeoutSeconds": 10}]}"#
            .write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// The schedule time the SDK read, as seconds since the epoch.
    static func seconds(_ time: String) throws -> Int64 {
        let formatter = ISO8601DateFormatter()
        let date = try #require(formatter.date(from: time.replacingOccurrences(of: "+00:00", with: "Z")), "schedule time \(time)")
        return Int64(date.timeIntervalSince1970)
    }

    /// `hearth triggers list`'s row of `tick` (pending is column 4, dead letters column 6).
    static func row(_ triggers: String, _ store: [String]) throws -> [String] {
        let list = try runHearth(["triggers", "list", "--triggers", triggers] + store)
        return TriggersOperatorEndToEndTests.lines(list.output).first { $0.first == "tick" } ?? []
    }

    @Test func oncePerDueTimeThroughASIGKILLAndTheMissedOneAtStart() throws {
        let python = try pythonInterpreter()
        let dir = TemporaryDirectory(), work = TemporaryDirectory()
        let function = try ScheduledFunction(python: python, directory: work.path)
        let triggers = try Self.triggersFile(port: function.port, in: work.path)
        let store = try TriggersOperatorEndToEndTests.storeArguments(dir.path)
        let first = try HearthProcess.serve(dataDirectory: dir.path, environment: ["HEARTH_TRIGGERS": triggers])
        // The first due time after the start (the start itself records none).
        let one = try function.waitFor(1, nodes: [first])
        try waitUntil("the first due time delivered and gone from the outbox") { try Self.row(triggers, store).dropFirst(4).first == "0" }
        first.signal(SIGKILL)
        _ = try first.waitForExit()
        // Down past the next due time: it is missed, and runs once at the next start.
        let missed = try Self.seconds(one[0].time) + 60
        while Date().timeIntervalSince1970 < Double(missed) + 1 { Thread.sleep(forTimeInterval: 0.2) }
        let second = try HearthProcess.serve(dataDirectory: dir.path, environment: ["HEARTH_TRIGGERS": triggers])
        let two = try function.waitFor(2, nodes: [second])
        try waitUntil("the missed due time delivered") { try Self.row(triggers, store).dropFirst(4).first == "0" }
        second.signal(SIGTERM)
        #expect(try second.waitForExit() == 0)
        // Stopped: whatever was recorded was delivered (nothing pending, nothing dead).
        let row = try Self.row(triggers, store)
        #expect(row.count > 6 && row[1] == "schedule" && row[4] == "0" && row[6] == "0", "\(row)")
        let calls = function.calls
        #expect(calls.count == 2, "one call per due time: \(calls)")
        #expect(calls.allSatisfy { $0.job == "tick" })
        #expect(try calls.map { try Self.seconds($0.time) } == [missed - 60, missed], "\(two)")
    }

    @Test(.enabled(if: PostgresTests.enabled)) func oncePerDueTimeOnTwoNodes() throws {
        let python = try pythonInterpreter()
        let work = TemporaryDirectory()
        let function = try ScheduledFunction(python: python, directory: work.path)
        let triggers = try Self.triggersFile(port: function.port, in: work.path)
        let url = try PostgresCluster.shared().makeDatabase()
        let directories = [TemporaryDirectory(), TemporaryDirectory()]
        let nodes = try directories.map {
            try HearthProcess.serve(dataDirectory: $0.path, environment: ["HEARTH_STORE": url, "HEARTH_TRIGGERS": triggers])
        }
        let calls = try function.waitFor(2, nodes: nodes)
        try waitUntil("both due times delivered") { try Self.row(triggers, ["--store", url]).dropFirst(4).first == "0" }
        for node in nodes { node.signal(SIGTERM) }
        for node in nodes { #expect(try node.waitForExit() == 0) }
        let row = try Self.row(triggers, ["--store", url])
        #expect(row.count > 6 && row[4] == "0" && row[6] == "0", "\(row)")
        let all = function.calls
        #expect(all.count == 2, "one call per due time, from either node: \(all)")
        let times = try all.map { try Self.seconds($0.time) }
        #expect(times.count == 2 && times[1] - times[0] == 60, "\(calls)")
    }
}
