import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The weather alerts example of docs/triggers.md (`examples/functions/weather_alerts`), as
/// shipped: its `main.py` in two Functions Framework processes (the scheduled `check_weather`
/// and the database trigger `notify`), its `rules.json` and its `triggers.json` with the
/// built `hearth`. The triggers file is the one `hearth triggers import` makes from the
/// SDK's manifest; the test swaps its ports for free ones and its `every 5 minutes` for
/// `every 1 minutes`, so the test takes one to three minutes of due times.
@Suite struct WeatherAlertsExampleEndToEndTests {
    static let example = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../examples/functions/weather_alerts").standardizedFileURL.path
    static let shippedCheckURL = "http://127.0.0.1:8081/", shippedNotifyURL = "http://127.0.0.1:8082/"
    static let shippedSchedule = #""schedule": "every 5 minutes""#

    /// Safety net for a condition that waits on due times one minute apart (two of them,
    /// when a run was under way as the favourites were written).
    static let dueTimesTimeout: Duration = .seconds(180)

    /// `functions-framework --target <target>` on `port`, firebase-admin pointed at Hearth
    /// (emulator mode: the http `databaseURL`), the weather read from `stub`.
    static func startFunction(python: String, target: String, signature: String, port: Int, hearthPort: Int,
                              stub: String, log: String) throws -> ChildProcess {
        let process = ChildProcess()
        _ = try FunctionsFrameworkChild.start(
            process, python: python, script: example + "/main.py", target: target, signatureType: signature, port: port,
            environment: ["FIREBASE_CONFIG": #"{"databaseURL": "http://127.0.0.1:\#(hearthPort)?ns=hearth"}"#, "WEATHER_STUB": stub],
            directory: URL(fileURLWithPath: log).deletingLastPathComponent().path, log: log, droppingInherited: "FIREBASE_")
        return process
    }

    /// The example's triggers file with its receivers' ports replaced and its schedule every minute.
    static func triggersFile(checkPort: Int, notifyPort: Int, in directory: String) throws -> String {
        let shipped = try String(contentsOfFile: example + "/triggers.json", encoding: .utf8)
        #expect(shipped.contains(shippedCheckURL) && shipped.contains(shippedNotifyURL) && shipped.contains(shippedSchedule))
        let path = directory + "/triggers.json"
        try shipped.replacingOccurrences(of: shippedCheckURL, with: "http://127.0.0.1:\(checkPort)/")
            .replacingOccurrences(of: shippedNotifyURL, with: "http://127.0.0.1:\(notifyPort)/")
            .replacingOccurrences(of: shippedSchedule, with: #""schedule": "every 1 minutes""#)
            .write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// Writes the stub weather file (atomically: a run reads the old or the new one whole).
    static func writeWeather(_ conditions: [String: String], to path: String) throws {
        let object = conditions.mapValues { ["condition": $0, "temperature": 10] as [String: Any] }
        try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: path), options: .atomic)
    }

    /// `path` read as `user` (nil when nothing is there); the status must be 200.
    static func read(_ path: String, as user: CityStatsExampleEndToEndTests.User) throws -> [String: Any]? {
        let result = try curl("GET", user.base + "/\(path).json?auth=\(user.token)")
        #expect(result.status == 200, "\(path): \(result.body)")
        return json(result.body) as? [String: Any]
    }

    /// Waits until `condition` holds, with `dueTimesTimeout` as the safety net; the logs on failure.
    static func waitFor(_ what: String, logs: @autoclosure () -> String, _ condition: () throws -> Bool) throws {
        let deadline = ContinuousClock.now + dueTimesTimeout
        while try !condition() {
            guard ContinuousClock.now < deadline else {
                Issue.record("timed out waiting for \(what); logs:\n\(logs())")
                throw CurlError.failed(status: -1, output: "timed out waiting for \(what)")
            }
            Thread.sleep(forTimeInterval: 0.2)
        }
    }

    /// The shipped triggers file is what `hearth triggers import` makes of the manifest the
    /// SDK serves for the example's folder: the decorators and the file agree.
    @Test func theShippedTriggersFileIsTheImportedManifest() throws {
        let python = try pythonInterpreter()
        let folder = TemporaryDirectory()
        for file in ["main.py", "weather_stub.json"] {
            try FileManager.default.copyItem(atPath: Self.example + "/" + file, toPath: folder.path + "/" + file)
        }
        let manifest = folder.path + "/functions.yaml"
        try TriggersImportEndToEndTests.manifest(python: python, folder: folder.path).write(toFile: manifest, atomically: true, encoding: .utf8)
        let imported = try runHearth(["triggers", "import", manifest,
                                      "--url", "check_weather=" + Self.shippedCheckURL, "--url", "notify=" + Self.shippedNotifyURL])
        let adminLog = (try? String(contentsOfFile: folder.path + "/admin.log", encoding: .utf8)) ?? ""
        #expect(imported.status == 0 && imported.error.isEmpty, "\(imported.error)\n\(adminLog)")
        #expect(imported.output == (try String(contentsOfFile: Self.example + "/triggers.json", encoding: .utf8)))
    }

    @Test func aChangedConditionAlertsExactlyTheUsersWithThatCity() throws {
        let python = try pythonInterpreter()
        let dir = TemporaryDirectory(), work = TemporaryDirectory()
        // Held (refusing) until each function starts: events sent before go nowhere else.
        let checkHeld = try RefusingPort(), notifyHeld = try RefusingPort()
        let checkPort = checkHeld.port, notifyPort = notifyHeld.port
        let stub = work.path + "/weather.json"
        try Self.writeWeather(["Oslo": "cloudy", "Rome": "sunny", "Paris": "rain", "St. Petersburg": "snow"], to: stub)
        let rules = try String(contentsOfFile: Self.example + "/rules.json", encoding: .utf8)
        let server = try HearthProcess.serve(dataDirectory: dir.path, rules: rules, environment: [
            "HEARTH_TRIGGERS": try Self.triggersFile(checkPort: checkPort, notifyPort: notifyPort, in: work.path),
            "HEARTH_ACCEPT_EMULATOR_OWNER": "true",
        ])
        let portText = try #require(server.baseURL.split(separator: ":").last)
        let port = try #require(Int(portText))
        let checkLog = work.path + "/check_weather.log", notifyLog = work.path + "/notify.log"
        checkHeld.release()
        notifyHeld.release()
        let check = try Self.startFunction(python: python, target: "check_weather", signature: "http", port: checkPort,
                                           hearthPort: port, stub: stub, log: checkLog)
        let notify = try Self.startFunction(python: python, target: "notify", signature: "cloudevent", port: notifyPort,
                                            hearthPort: port, stub: stub, log: notifyLog)
        defer {
            for function in [check, notify] {
                function.signal(SIGKILL)
                function.waitUntilExit()
            }
        }
        let logs = {
            ["check_weather": checkLog, "notify": notifyLog].map { "--- \($0.key):\n" + ((try? String(contentsOfFile: $0.value, encoding: .utf8)) ?? "") }
                .joined(separator: "\n") + "\n--- hearth:\n" + server.log
        }
        // notify is delivered once (the SDK's database functions say retry: false): it must be up.
        // check_weather answers any request by running: before anyone signs up, that finds no favourites.
        try CityStatsExampleEndToEndTests.waitUntilAnswering("http://127.0.0.1:\(notifyPort)/", log: notifyLog)
        try CityStatsExampleEndToEndTests.waitUntilAnswering("http://127.0.0.1:\(checkPort)/", log: checkLog)

        typealias User = CityStatsExampleEndToEndTests.User
        let ann = try User(signingUpAt: server.baseURL), bob = try User(signingUpAt: server.baseURL)
        let carol = try User(signingUpAt: server.baseURL)
        try ann.add("oslo", city: "Oslo")
        try ann.add("rome", city: "Rome")
        try bob.add("oslo", city: "Oslo")
        try bob.add("paris", city: "Paris")
        try bob.add("stp", city: "St. Petersburg")  // escaped in keys as St%2E Petersburg
        try carol.add("rome", city: "Rome")
        let cities = ["Oslo", "Paris", "Rome", "St%2E Petersburg"]

        // A due time records every favourite city's weather: the baseline, no alert yet.
        var weather: [String: Any] = [:]
        try Self.waitFor("the first weather", logs: logs()) {
            weather = try Self.read("weather", as: carol) ?? [:]
            return Set(weather.keys) == Set(cities)
        }
        for user in [ann, bob, carol] { #expect(try Self.read("alerts/\(user.uid)", as: user) == nil) }

        // Oslo, Paris and St. Petersburg change; Rome does not.
        try Self.writeWeather(["Oslo": "snow", "Rome": "sunny", "Paris": "sunny", "St. Petersburg": "sunny"], to: stub)
        func condition(_ city: String) -> String? { (weather[city] as? [String: Any])?["condition"] as? String }
        func at(_ city: String) -> String { ((weather[city] as? [String: Any])?["at"] as? String) ?? "" }
        // The run that saw the change is complete when every city carries its time (each
        // city's alerts are written before its weather).
        try Self.waitFor("the changed weather", logs: logs()) {
            weather = try Self.read("weather", as: carol) ?? [:]
            return condition("Oslo") == "snow" && cities.allSatisfy { at($0) >= at("Oslo") }
        }
        let changedAt = at("Oslo")
        #expect(condition("Paris") == "sunny" && condition("St%2E Petersburg") == "sunny" && condition("Rome") == "sunny")

        // Exactly the users with a changed city have its alert, once, at the run's time.
        let expected: [(User, [String: [String]])] = [
            (ann, ["Oslo": ["cloudy", "snow"]]),
            (bob, ["Oslo": ["cloudy", "snow"], "Paris": ["rain", "sunny"], "St. Petersburg": ["snow", "sunny"]]),
            (carol, [:]),
        ]
        for (user, changes) in expected {
            let alerts = try Self.read("alerts/\(user.uid)", as: user) ?? [:]
            var seen: [String: [String]] = [:]
            for case let alert as [String: Any] in alerts.values {
                #expect(alert["at"] as? String == changedAt, "\(alert)")
                seen[alert["city"] as? String ?? "?"] = [alert["from"] as? String ?? "?", alert["to"] as? String ?? "?"]
            }
            #expect(alerts.count == changes.count && seen == changes, "\(user.uid): \(alerts)")

            // notify files each alert in the user's inbox under the alert's id.
            var inbox: [String: Any] = [:]
            try Self.waitFor("\(user.uid)'s inbox", logs: logs()) {
                inbox = try Self.read("users/\(user.uid)/inbox", as: user) ?? [:]
                return inbox.count >= alerts.count
            }
            #expect(Set(inbox.keys) == Set(alerts.keys), "\(inbox) \(alerts)")
            for (id, entry) in inbox { #expect((entry as? [String: Any])?["alert"] as? String == id, "\(entry)") }
        }

        // Alerts are their user's alone, and only the functions (an admin) write them.
        #expect(try curl("GET", server.baseURL + "/alerts/\(ann.uid).json?auth=\(bob.token)").status == 401)
        #expect(try curl("GET", server.baseURL + "/users/\(ann.uid)/inbox.json?auth=\(bob.token)").status == 401)
        #expect(try curl("PUT", server.baseURL + "/alerts/\(ann.uid)/fake.json?auth=\(ann.token)", body: #"{"city": "Oslo"}"#).status == 401)
        #expect(try curl("PUT", server.baseURL + "/weather/Oslo.json?auth=\(ann.token)", body: #"{"condition": "hail"}"#).status == 401)
        #expect(!server.log.contains("dead letters"), "\(logs())")
        server.signal(SIGTERM)
        #expect(try server.waitForExit() == 0)
    }
}
