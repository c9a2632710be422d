import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Order per location, locations at once, end to end: `hearth serve --triggers` delivering
/// to firebase-functions' `db_fn` under the Functions Framework (`Python/trigger_functions.py`).
@Suite struct TriggersConcurrencyEndToEndTests {
    static let owner = ["Authorization: Bearer owner"]

    /// Serves one `written` trigger at `maxConcurrency` to the functions on `port`.
    static func serve(_ directory: String, work: String, port: Int, maxConcurrency: Int = 16) throws -> HearthProcess {
        try TriggersEndToEndTests.serve(directory, triggers: TriggersEndToEndTests.triggersFile(
            port: port, in: work, kinds: ["written"], maxConcurrency: maxConcurrency))
    }

    static func put(_ server: HearthProcess, _ path: String, _ body: String) throws {
        #expect(try curl("PUT", server.baseURL + path + ".json", body: body, headers: owner).status == 200)
    }

    static func reference(_ call: [String: Any]) -> String { call["reference"] as? String ?? "" }

    /// The function fails every event of one location (500): the 20 events at 20 other
    /// locations are all delivered while that one keeps being retried.
    @Test func aPoisonEventHoldsBackOnlyItsLocation() throws {
        let python = try pythonInterpreter()
        let dir = TemporaryDirectory(), work = TemporaryDirectory()
        let poison = "users/poison/favorites/x"
        let functions = try FunctionsFramework(python: python, directory: work.path, environment: ["HEARTH_TRIGGER_FAIL_REF": poison])
        let server = try Self.serve(dir.path, work: work.path, port: functions.port)
        try Self.put(server, "/" + poison, #"{"n": 0}"#)
        _ = try functions.waitFor(1, "the poison event's first attempt")
        for index in 0..<20 { try Self.put(server, "/users/u\(index)/favorites/f", #"{"n": \#(index)}"#) }
        try waitUntil("the 20 healthy events delivered and the poison one retried") {
            let calls = functions.received
            return Set(calls.map(Self.reference).filter { $0 != poison }).count == 20
                && calls.filter { Self.reference($0) == poison }.count >= 2
        }
        let calls = functions.received
        let healthy = calls.filter { Self.reference($0) != poison }
        #expect(Set(healthy.map(Self.reference)) == Set((0..<20).map { "users/u\($0)/favorites/f" }))
        let poisonIDs = Set(calls.filter { Self.reference($0) == poison }.compactMap { $0["id"] as? String })
        #expect(poisonIDs.count == 1, "one event, attempted again and again")
        // Hearth counts the 20 deliveries (the poison event stays pending, retried).
        try waitUntil("20 deliveries counted") {
            let metrics = try curl("GET", server.baseURL + "/metrics").body
            return metrics.contains(#"hearth_trigger_delivered_total{namespace="(default)",trigger="fav_written"} 20"#)
        }
        server.signal(SIGTERM)
        #expect(try server.waitForExit() == 0)
    }

    /// The function sleeps a random 0–30 ms per call: each location's events arrive in
    /// commit order, and two locations are under way at once (the first call for `a` is
    /// held until a call for `b` arrives: a trigger delivering one at a time never gets there).
    @Test func eachLocationInCommitOrderUnderRandomLatency() throws {
        let python = try pythonInterpreter()
        let dir = TemporaryDirectory(), work = TemporaryDirectory()
        let functions = try FunctionsFramework(python: python, directory: work.path, environment: [
            "HEARTH_TRIGGER_SLEEP_MS": "30", "HEARTH_TRIGGER_HOLD": "users/a/favorites/f,users/b/favorites/f"])
        let server = try Self.serve(dir.path, work: work.path, port: functions.port)
        let locations = ["a", "b", "c", "d", "e"]
        for round in 0..<6 {
            for location in locations { try Self.put(server, "/users/\(location)/favorites/f", #"{"n": \#(round)}"#) }
        }
        let calls = try functions.waitFor(30, "thirty calls")
        for location in locations {
            let values = calls.filter { Self.reference($0) == "users/\(location)/favorites/f" }.map { ($0["after"] as? [String: Any])?["n"] as? Int }
            #expect(values == (0..<6).map { $0 }, "\(location): \(values)")
        }
        let overlap = try String(contentsOfFile: functions.outFile + ".overlap", encoding: .utf8)
        #expect(overlap == "yes", "b's event arrived while a's was under way")
        server.signal(SIGTERM)
        #expect(try server.waitForExit() == 0)
    }

    /// Hearth SIGKILLed while it delivers five locations at once, then restarted on the same
    /// data: every event arrives (at least once), and each location's calls, duplicates
    /// included, never go back in commit order (an event is sent only once every earlier
    /// event of its location is out of the outbox).
    @Test func orderPerLocationHoldsThroughASigkill() throws {
        let python = try pythonInterpreter()
        let dir = TemporaryDirectory(), work = TemporaryDirectory()
        let functions = try FunctionsFramework(python: python, directory: work.path, environment: ["HEARTH_TRIGGER_SLEEP_MS": "40"])
        let triggers = try TriggersEndToEndTests.triggersFile(port: functions.port, in: work.path, kinds: ["written"])
        let server = try TriggersEndToEndTests.serve(dir.path, triggers: triggers)
        let locations = ["a", "b", "c", "d", "e"], rounds = 8
        for round in 0..<rounds {
            for location in locations { try Self.put(server, "/users/\(location)/favorites/f", #"{"n": \#(round)}"#) }
        }
        _ = try functions.waitFor(8, "deliveries under way")
        server.signal(SIGKILL)
        _ = try server.waitForExit()
        let restarted = try TriggersEndToEndTests.serve(dir.path, triggers: triggers)
        try waitUntil("every event delivered") { Set(functions.received.compactMap { $0["id"] as? String }).count == rounds * locations.count }
        let calls = functions.received
        for location in locations {
            let values = calls.filter { Self.reference($0) == "users/\(location)/favorites/f" }.compactMap { ($0["after"] as? [String: Any])?["n"] as? Int }
            #expect(zip(values, values.dropFirst()).allSatisfy { $0 <= $1 }, "\(location): \(values)")
            #expect(Set(values) == Set(0..<rounds), "\(location): \(values)")
        }
        restarted.signal(SIGTERM)
        #expect(try restarted.waitForExit() == 0)
    }

    /// maxConcurrency 1: the trigger's events arrive in commit order across its locations.
    @Test func maxConcurrencyOneKeepsTheTriggersOrder() throws {
        let python = try pythonInterpreter()
        let dir = TemporaryDirectory(), work = TemporaryDirectory()
        let functions = try FunctionsFramework(python: python, directory: work.path, environment: ["HEARTH_TRIGGER_SLEEP_MS": "10"])
        let server = try Self.serve(dir.path, work: work.path, port: functions.port, maxConcurrency: 1)
        var written: [String] = []
        for round in 0..<3 {
            for location in ["a", "b", "c", "d"] {
                try Self.put(server, "/users/\(location)/favorites/f", #"{"n": \#(round)}"#)
                written.append("users/\(location)/favorites/f=\(round)")
            }
        }
        let calls = try functions.waitFor(written.count, "every call")
        #expect(calls.map { "\(Self.reference($0))=\(($0["after"] as? [String: Any])?["n"] as? Int ?? -1)" } == written)
        server.signal(SIGTERM)
        #expect(try server.waitForExit() == 0)
    }
}
