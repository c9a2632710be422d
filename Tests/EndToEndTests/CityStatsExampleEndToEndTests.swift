import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The example function of docs/triggers.md (`examples/functions/city_stats`), exactly as
/// shipped: its `main.py` under the open-source Functions Framework, its `triggers.json`
/// (the URL's port swapped for a free one) and its `rules.json`, with the built `hearth`.
/// Two users add, rename and remove favourites over REST; `/stats/cities` must end with
/// the number of users per city, written back by the function through firebase-admin.
@Suite struct CityStatsExampleEndToEndTests {
    static let example = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../examples/functions/city_stats").standardizedFileURL.path

    /// `functions-framework --source main.py --target count_city_users` on `port`, its
    /// firebase-admin pointed at Hearth (emulator mode: the http `databaseURL`).
    static func startFunction(python: String, port: Int, hearthPort: Int, log: String) throws -> ChildProcess {
        let process = ChildProcess()
        _ = try FunctionsFrameworkChild.start(
            process, python: python, script: example + "/main.py", target: "count_city_users", signatureType: "cloudevent",
            port: port, environment: ["FIREBASE_CONFIG": #"{"databaseURL": "http://127.0.0.1:\#(hearthPort)?ns=hearth"}"#],
            directory: URL(fileURLWithPath: log).deletingLastPathComponent().path, log: log, droppingInherited: "FIREBASE_")
        return process
    }

    /// The example's triggers file with its receiver's port replaced by `port`.
    static func triggersFile(port: Int, in directory: String) throws -> String {
        let shipped = try String(contentsOfFile: example + "/triggers.json", encoding: .utf8)
        #expect(shipped.contains("http://127.0.0.1:8081/"))
        let path = directory + "/triggers.json"
        try shipped.replacingOccurrences(of: "http://127.0.0.1:8081/", with: "http://127.0.0.1:\(port)/")
            .write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    struct User {
        let uid: String
        let token: String
        let base: String

        init(signingUpAt base: String) throws {
            let result = try curl("POST", base + "/v1/accounts:signUp", body: #"{"returnSecureToken":true}"#)
            let object = try #require(json(result.body) as? [String: Any], "\(result.body)")
            (uid, token, self.base) = (try #require(object["localId"] as? String), try #require(object["idToken"] as? String), base)
        }

        func favorite(_ id: String) -> String { base + "/users/\(uid)/favorites/\(id).json?auth=\(token)" }

        /// A favourite as the reference rules want it (every required field).
        func add(_ id: String, city: String) throws {
            let body = #"{"id": "\#(id)", "name": "\#(city)", "createdAt": {".sv": "timestamp"}, "createdBy": "\#(uid)", "latitude": 1.5, "longitude": 2.5}"#
            let result = try curl("PUT", favorite(id), body: body)
            #expect(result.status == 200, "\(result.body)")
        }

        func rename(_ id: String, to city: String) throws {
            let result = try curl("PATCH", favorite(id), body: #"{"name": "\#(city)"}"#)
            #expect(result.status == 200, "\(result.body)")
        }

        func remove(_ id: String) throws {
            #expect(try curl("DELETE", favorite(id)).status == 200)
        }

        /// `/stats/cities` as this signed-in user reads it (the example's rules allow it).
        func cities() throws -> NSDictionary? {
            let result = try curl("GET", base + "/stats/cities.json?auth=\(token)")
            #expect(result.status == 200, "\(result.body)")
            return json(result.body) as? NSDictionary
        }
    }

    /// Waits (60 s safety net) until `/stats/cities` is `expected`.
    static func waitForCities(_ expected: NSDictionary, reader: User, functionLog: String) throws {
        let deadline = ContinuousClock.now + .seconds(60)
        var seen = try reader.cities()
        while seen != expected {
            guard ContinuousClock.now < deadline else {
                Issue.record("/stats/cities is \(String(describing: seen)), not \(expected); function log:\n\((try? String(contentsOfFile: functionLog, encoding: .utf8)) ?? "")")
                return
            }
            Thread.sleep(forTimeInterval: 0.05)
            seen = try reader.cities()
        }
    }

    /// Waits (60 s safety net) until something answers HTTP at `url`, so the first events
    /// do not wait for a retry.
    static func waitUntilAnswering(_ url: String, log: String) throws {
        let deadline = ContinuousClock.now + .seconds(60)
        while (try? curl("GET", url)) == nil {
            guard ContinuousClock.now < deadline else {
                throw CurlError.failed(status: -1, output: "the function never answered; its log:\n" + ((try? String(contentsOfFile: log, encoding: .utf8)) ?? ""))
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }

    @Test func theExampleKeepsTheNumberOfUsersPerCity() throws {
        let python = try pythonInterpreter()
        let dir = TemporaryDirectory(), work = TemporaryDirectory()
        // Held (refusing) until the function starts: events sent before go nowhere else.
        let functionHeld = try RefusingPort()
        let functionPort = functionHeld.port
        let rules = try String(contentsOfFile: Self.example + "/rules.json", encoding: .utf8)
        let server = try HearthProcess.serve(dataDirectory: dir.path, rules: rules, environment: [
            "HEARTH_TRIGGERS": try Self.triggersFile(port: functionPort, in: work.path),
            "HEARTH_ACCEPT_EMULATOR_OWNER": "true",
        ])
        let portText = try #require(server.baseURL.split(separator: ":").last)
        let port = try #require(Int(portText))
        let functionLog = work.path + "/function.log"
        functionHeld.release()
        let function = try Self.startFunction(python: python, port: functionPort, hearthPort: port, log: functionLog)
        defer {
            function.signal(SIGKILL)
            function.waitUntilExit()
        }
        try Self.waitUntilAnswering("http://127.0.0.1:\(functionPort)/", log: functionLog)
        let ann = try User(signingUpAt: server.baseURL), bob = try User(signingUpAt: server.baseURL)

        // Ann has Oslo twice: she still counts once.
        try ann.add("oslo", city: "Oslo")
        try ann.add("rome", city: "Rome")
        try ann.add("oslo2", city: "Oslo")
        try bob.add("oslo", city: "Oslo")
        try bob.add("paris", city: "Paris")
        try bob.add("stp", city: "St. Petersburg")  // a "." cannot be in a key: escaped as %2E
        try Self.waitForCities(["Oslo": 2, "Rome": 1, "Paris": 1, "St%2E Petersburg": 1], reader: bob, functionLog: functionLog)

        // Removing one of Ann's two Oslos keeps her; the second takes her out. Bob's Paris
        // becomes Rome (an update), his Oslo and St. Petersburg go.
        try ann.remove("oslo")
        try bob.rename("paris", to: "Rome")
        try bob.remove("stp")
        try ann.remove("oslo2")
        try bob.remove("oslo")
        let final: NSDictionary = ["Oslo": 0, "Rome": 2, "Paris": 0, "St%2E Petersburg": 0]
        try Self.waitForCities(final, reader: ann, functionLog: functionLog)

        // At least once: an old event delivered again (Bob's Oslo created) changes nothing,
        // because the function counts from the data as it is now.
        let replay = try curl("POST", "http://127.0.0.1:\(functionPort)/", body: #"{"data": null, "delta": {"name": "Oslo"}}"#, headers: [
            "Content-Type: application/json", "ce-specversion: 1.0", "ce-type: google.firebase.database.ref.v1.written",
            "ce-source: //firebasedatabase.googleapis.com/projects/_/locations/us-central1/instances/hearth",
            "ce-subject: refs/users/\(bob.uid)/favorites/oslo", "ce-id: hearth-replayed", "ce-time: 2026-11-26T00:00:00.000Z",
            "ce-instance: hearth", "ce-ref: users/\(bob.uid)/favorites/oslo", "ce-location: us-central1",
            "ce-firebasedatabasehost: 127.0.0.1:\(port)", "ce-authtype: app_user", "ce-authid: \(bob.uid)",
        ])
        #expect(replay.status == 200, "\(replay.body)")
        #expect(try ann.cities() == final)
        // Clients cannot write the statistics; only the function (an admin) does.
        #expect(try curl("PUT", server.baseURL + "/stats/cities/Oslo.json?auth=\(ann.token)", body: "99").status == 401)
        #expect(!server.log.contains("dead letters"), "\(server.log)")
        server.signal(SIGTERM)
        #expect(try server.waitForExit() == 0)
    }
}
