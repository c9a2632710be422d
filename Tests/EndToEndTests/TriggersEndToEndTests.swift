import Foundation
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `Python/trigger_functions.py` (firebase-functions' db_fn) under the open-source Functions
/// Framework (`FunctionsFrameworkChild`: `init` returns once it listens); what the functions
/// received is read from the JSON lines they append to a file.
final class FunctionsFramework {
    let process = ChildProcess()
    let port: Int
    let outFile: String
    /// The framework's output.
    let log: String

    init(python: String, directory: String, failFirst: Bool = false, port: Int? = nil, environment extra: [String: String] = [:]) throws {
        let port = try port ?? freeLoopbackPort()
        self.port = port
        outFile = directory + "/received.jsonl"
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Python/trigger_functions.py").path
        let environment = ["HEARTH_TRIGGER_OUT": outFile, "HEARTH_TRIGGER_FAIL_FIRST": failFirst ? "1" : "0"].merging(extra) { _, new in new }
        log = try FunctionsFrameworkChild.start(process, python: python, script: script, target: "router", signatureType: "cloudevent",
                                                port: port, environment: environment, directory: directory)
    }

    /// Every call the functions recorded, in order.
    var received: [[String: Any]] {
        let text = (try? String(contentsOfFile: outFile, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    /// Waits (60 s safety net) until `count` calls were recorded.
    func waitFor(_ count: Int, _ what: String) throws -> [[String: Any]] {
        let deadline = ContinuousClock.now + .seconds(60)
        while true {
            let calls = received
            if calls.count >= count { return calls }
            guard ContinuousClock.now < deadline else {
                throw FrameworkError(description: "timed out waiting for \(what): \(calls.count) of \(count) calls: \(calls); the framework's log:\n\(FunctionsFrameworkChild.tail(of: log))")
            }
            Thread.sleep(forTimeInterval: 0.02)
        }
    }

    struct FrameworkError: Error, CustomStringConvertible { let description: String }

    deinit {
        if process.isRunning {
            process.signal(SIGKILL)
            process.waitUntilExit()
        }
    }
}

/// Firebase database triggers end to end: `hearth serve --triggers` delivers RTDB
/// CloudEvents that the real `firebase-functions` SDK parses under the Functions Framework.
@Suite struct TriggersEndToEndTests {
    /// A framework that cannot bind its port (another process listens there) fails the
    /// test's start with its own log, not as missing calls later.
    @Test func aFrameworkWhosePortIsTakenFailsAtTheStartWithItsLog() throws {
        let python = try pythonInterpreter()
        let work = TemporaryDirectory()
        let taken = try LoopbackListener { _ in }
        defer { taken.stop() }
        do {
            _ = try FunctionsFramework(python: python, directory: work.path, port: taken.port)
            Issue.record("the framework started on a port another process listens on")
        } catch let error as LiveClientError {
            #expect(error.description.contains("exited"), "\(error)")
            #expect(error.description.contains("in use"), "the framework's log is in the message: \(error)")
        }
    }

    static let rules = #"{"rules": {"users": {"$uid": {".read": "auth != null && auth.uid == $uid", ".write": "auth != null && auth.uid == $uid"}}}}"#

    static func triggersFile(port: Int, in directory: String, kinds: [String] = ["written", "created", "updated", "deleted"],
                             maxConcurrency: Int = 16) throws -> String {
        let entries = kinds.map {
            #"{"name": "fav_\#($0)", "event": "\#($0)", "ref": "/users/{uid}/favorites/{favId}", "url": "http://127.0.0.1:\#(port)/", "retry": true, "maxConcurrency": \#(maxConcurrency)}"#
        }
        let path = directory + "/triggers.json"
        try ("{\"triggers\": [\n" + entries.joined(separator: ",\n") + "\n]}").write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// `Bearer owner` is the admin credential (either engine).
    static func serve(_ directory: String, triggers: String) throws -> HearthProcess {
        try HearthProcess.serve(dataDirectory: directory, rules: rules,
                                environment: ["HEARTH_TRIGGERS": triggers, "HEARTH_ACCEPT_EMULATOR_OWNER": "true"])
    }

    /// A server with `triggers` where a signed-up user wrote favourites f0… (`count`, each
    /// acknowledged): their events are recorded.
    static func serveWithFavorites(_ directory: String, triggers: String, count: Int) throws -> HearthProcess {
        let server = try serve(directory, triggers: triggers)
        let (uid, token) = try signUp(server.baseURL)
        for index in 0..<count {
            let result = try curl("PUT", server.baseURL + "/users/\(uid)/favorites/f\(index).json?auth=\(token)", body: #"{"n": \#(index)}"#)
            #expect(result.status == 200)
        }
        return server
    }

    static func signUp(_ base: String) throws -> (uid: String, token: String) {
        let result = try curl("POST", base + "/v1/accounts:signUp", body: #"{"returnSecureToken":true}"#, headers: ["Content-Type: application/json"])
        let object = try #require(json(result.body) as? [String: Any])
        return (try #require(object["localId"] as? String), try #require(object["idToken"] as? String))
    }

    @Test func theSDKReceivesParamsValuesAndAuth() throws {
        let python = try pythonInterpreter()
        let dir = TemporaryDirectory(), work = TemporaryDirectory()
        let functions = try FunctionsFramework(python: python, directory: work.path)
        let server = try Self.serve(dir.path, triggers: Self.triggersFile(port: functions.port, in: work.path))
        let (uid, token) = try Self.signUp(server.baseURL)
        let favorite = server.baseURL + "/users/\(uid)/favorites/f1.json"
        #expect(try curl("PUT", favorite + "?auth=\(token)", body: #"{"name": "Oslo", "lat": 59}"#).status == 200)
        #expect(try curl("PATCH", favorite + "?auth=\(token)", body: #"{"name": "Bergen", "lat": null}"#).status == 200)
        #expect(try curl("DELETE", favorite, headers: ["Authorization: Bearer owner"]).status == 200)
        // 3 written + created + updated + deleted.
        let calls = try functions.waitFor(6, "six calls")
        func ofKind(_ kind: String) -> [[String: Any]] { calls.filter { $0["kind"] as? String == kind } }
        #expect(calls.count == 6)
        #expect(calls.allSatisfy { ($0["params"] as? [String: String]) == ["uid": uid, "favId": "f1"] })
        #expect(calls.allSatisfy { $0["reference"] as? String == "users/\(uid)/favorites/f1" && $0["instance"] as? String == "hearth" })
        #expect(calls.allSatisfy { $0["subject"] as? String == "refs/users/\(uid)/favorites/f1" })
        let written = ofKind("written")
        #expect(written.count == 3)
        let oslo: NSDictionary = ["name": "Oslo", "lat": 59], bergen: NSDictionary = ["name": "Bergen"]
        let befores: [NSDictionary?] = written.map { $0["before"] as? NSDictionary }
        let afters: [NSDictionary?] = written.map { $0["after"] as? NSDictionary }
        let authTypes: [String?] = written.map { $0["auth_type"] as? String }
        let authIDs: [String?] = written.map { $0["auth_id"] as? String }
        #expect(befores == [nil, oslo, bergen])
        #expect(afters == [oslo, bergen, nil])
        #expect(authTypes == ["app_user", "app_user", "admin"])
        #expect(authIDs == [uid, uid, nil])
        let created = try #require(ofKind("created").first), updated = try #require(ofKind("updated").first)
        let deleted = try #require(ofKind("deleted").first)
        #expect(created["after"] as? NSDictionary == oslo)
        #expect(updated["before"] as? NSDictionary == oslo)
        #expect(updated["after"] as? NSDictionary == bergen)
        #expect(deleted["before"] as? NSDictionary == bergen)
        #expect(deleted["auth_type"] as? String == "admin")
        server.signal(SIGTERM)
        #expect(try server.waitForExit() == 0)
    }

    /// Each namespace records its own events in its own outbox and delivers them
    /// with its name as the instance (the default's is the project id); a trigger without
    /// an `instance` pattern fires for every database, as firebase-functions' default `*`.
    @Test func eachNamespaceDeliversItsOwnEvents() throws {
        let python = try pythonInterpreter()
        let dir = TemporaryDirectory(), work = TemporaryDirectory()
        let functions = try FunctionsFramework(python: python, directory: work.path)
        try Self.rules.write(toFile: work.path + "/a.rules.json", atomically: true, encoding: .utf8)
        try #"{"namespaces": {"env-a": {"rules": "a.rules.json"}}}"#.write(toFile: work.path + "/namespaces.json", atomically: true, encoding: .utf8)
        let server = try HearthProcess.serve(dataDirectory: dir.path, rules: Self.rules, environment: [
            "HEARTH_TRIGGERS": try Self.triggersFile(port: functions.port, in: work.path), "HEARTH_ACCEPT_EMULATOR_OWNER": "true",
            "HEARTH_NAMESPACES_FILE": work.path + "/namespaces.json"])
        let owner = ["Authorization: Bearer owner"]
        #expect(try curl("PUT", server.baseURL + "/users/ua/favorites/fa.json?ns=env-a", body: #"{"name": "Oslo"}"#, headers: owner).status == 200)
        #expect(try curl("PUT", server.baseURL + "/users/ud/favorites/fd.json", body: #"{"name": "Bergen"}"#, headers: owner).status == 200)
        // written + created for each write, and nothing more.
        let calls = try functions.waitFor(4, "four calls")
        let written = calls.filter { $0["kind"] as? String == "written" }
        let byInstance = Dictionary(written.map { ($0["instance"] as? String ?? "", $0["params"] as? [String: String] ?? [:]) },
                                    uniquingKeysWith: { first, _ in first })
        #expect(written.count == 2)
        #expect(byInstance == ["env-a": ["uid": "ua", "favId": "fa"], "hearth": ["uid": "ud", "favId": "fd"]])
        // Each database's trigger series are its own (labelled with its namespace).
        try waitUntil("each namespace's deliveries counted") {
            let metrics = try curl("GET", server.baseURL + "/metrics").body
            return [#"hearth_trigger_delivered_total{namespace="env-a",trigger="fav_written"} 1"#,
                    #"hearth_trigger_delivered_total{namespace="(default)",trigger="fav_written"} 1"#,
                    #"hearth_trigger_delivered_total{namespace="env-a",trigger="fav_created"} 1"#].allSatisfy(metrics.contains)
        }
        server.signal(SIGTERM)
        #expect(try server.waitForExit() == 0)
        #expect(functions.received.count == 4, "\(functions.received)")
    }

    /// Acknowledged writes are events that will be delivered: Hearth SIGKILLed while the
    /// receiver is down delivers them all after its restart, once the receiver is up, in
    /// commit order (maxConcurrency 1: across the trigger's locations too), each with one
    /// id across its attempts (the functions fail each event's first attempt).
    @Test func eventsSurviveSigkillAndAReceiverOutage() throws {
        let python = try pythonInterpreter()
        let dir = TemporaryDirectory(), work = TemporaryDirectory()
        let refusing = try RefusingPort()  // nobody listens yet
        let port = refusing.port
        let triggers = try Self.triggersFile(port: port, in: work.path, maxConcurrency: 1)
        let count = 4
        let server = try Self.serveWithFavorites(dir.path, triggers: triggers, count: count)
        server.signal(SIGKILL)
        _ = try server.waitForExit()
        let restarted = try Self.serve(dir.path, triggers: triggers)
        refusing.release()
        let functions = try FunctionsFramework(python: python, directory: work.path, failFirst: true, port: port)
        // Per event: created and written (two triggers), each failed once then delivered.
        let calls = try functions.waitFor(count * 2 * 2, "every event twice")
        for kind in ["written", "created"] {
            let attempts = calls.filter { $0["kind"] as? String == kind }
            let delivered = attempts.filter { $0["failed"] as? Bool == false }
            let order: [String] = delivered.compactMap { ($0["params"] as? [String: String])?["favId"] }
            #expect(order == (0..<count).map { "f\($0)" }, "\(kind): \(attempts)")
            for event in delivered {
                let id = event["id"] as? String
                let sameID = attempts.filter { $0["id"] as? String == id }
                let firstFailed = sameID.first?["failed"] as? Bool
                #expect(sameID.count == 2 && firstFailed == true, "\(kind): \(sameID)")
            }
            let ids = Set(delivered.compactMap { $0["id"] as? String })
            #expect(ids.count == count)
        }
        restarted.signal(SIGTERM)
        #expect(try restarted.waitForExit() == 0)
    }

    @Test func aBadTriggersFileStopsTheStartWithItsLineAndReason() throws {
        let dir = TemporaryDirectory()
        let path = dir.path + "/triggers.json"
        try "{\"triggers\": [\n  {\"name\": \"a\", \"event\": \"written\", \"ref\": \"/a\", \"url\": \"http://127.0.0.1:1/\"},\n  {\"name\": \"b\", \"event\": \"changed\", \"ref\": \"/b\", \"url\": \"http://127.0.0.1:1/\"}\n]}"
            .write(toFile: path, atomically: true, encoding: .utf8)
        let rules = try HearthProcess.writeRules(HearthProcess.openRules, in: dir.path)
        let child = try HearthProcess(arguments: ["serve", "--port", "0", "--data-dir", dir.path, "--rules", rules, "--triggers", path],
                                      dataDirectory: dir.path)
        #expect(try child.waitForExit() == 1)
        #expect(child.log.contains("triggers file \(path):3: trigger \"b\": \"event\" must be"), "\(child.log)")
        #expect(!child.log.contains("listening on"))
    }

    /// SIGHUP reloads the triggers file; a bad one keeps the running set.
    @Test func sighupReloadsTheTriggersAndABadFileKeepsThem() throws {
        let received = Mutex<[String]>([])
        let receiver = try LoopbackListener { socket in
            guard let request = socket.readRequest() else { return }
            received.withLock { $0.append(request.header("ce-ref") ?? "") }
            try? socket.respond(204)
        }
        defer { receiver.stop() }
        let dir = TemporaryDirectory()
        let path = dir.path + "/triggers.json"
        func declare(_ ref: String) throws {
            try #"{"triggers": [{"name": "t", "event": "written", "ref": "\#(ref)", "url": "http://127.0.0.1:\#(receiver.port)/", "retry": true}]}"#
                .write(toFile: path, atomically: true, encoding: .utf8)
        }
        try declare("/a/{id}")
        let server = try HearthProcess.serve(dataDirectory: dir.path, environment: ["HEARTH_TRIGGERS": path])
        func waitForRefs(_ refs: [String]) throws {
            let deadline = ContinuousClock.now + .seconds(60)
            while received.withLock({ $0 }) != refs {
                guard ContinuousClock.now < deadline else { throw FunctionsFramework.FrameworkError(description: "received \(received.withLock { $0 }), not \(refs)") }
                Thread.sleep(forTimeInterval: 0.02)
            }
        }
        #expect(try curl("PUT", server.baseURL + "/a/1.json", body: "1").status == 200)
        try waitForRefs(["a/1"])
        try "{\"triggers\": [".write(toFile: path, atomically: true, encoding: .utf8)
        server.signal(SIGHUP)
        try server.waitForLog("triggers NOT reloaded", count: 1)
        #expect(try curl("PUT", server.baseURL + "/a/2.json", body: "2").status == 200)
        try waitForRefs(["a/1", "a/2"])
        try declare("/b/{id}")
        server.signal(SIGHUP)
        try server.waitForLog("triggers reloaded", count: 1)
        #expect(try curl("PUT", server.baseURL + "/a/3.json", body: "3").status == 200)
        #expect(try curl("PUT", server.baseURL + "/b/1.json", body: "1").status == 200)
        try waitForRefs(["a/1", "a/2", "b/1"])
        server.signal(SIGTERM)
        #expect(try server.waitForExit() == 0)
    }

    /// A write that would cause more than `maxEventsPerWrite` (1,000) events is refused
    /// whole with 413; one at the limit is taken.
    @Test func aWriteCausingTooManyEventsIsRefused() throws {
        let dir = TemporaryDirectory(), work = TemporaryDirectory()
        let refusing = try RefusingPort()  // refusing to the end
        defer { refusing.release() }
        let server = try Self.serve(dir.path, triggers: Self.triggersFile(port: refusing.port, in: work.path))
        let (uid, token) = try Self.signUp(server.baseURL)
        // Each new favourite is two events (created and written).
        func body(_ favorites: Int) -> String { "{" + (0..<favorites).map { "\"f\($0)\": 1" }.joined(separator: ",") + "}" }
        let favorites = server.baseURL + "/users/\(uid)/favorites.json?auth=\(token)"
        let refused = try curl("PUT", favorites, body: body(501))
        #expect(refused.status == 413 && refused.body.contains("more than 1000 trigger events"), "\(refused.body)")
        #expect(try curl("GET", favorites).body == "null")
        #expect(try curl("PUT", favorites, body: body(500)).status == 200)
        server.signal(SIGTERM)
        #expect(try server.waitForExit() == 0)
    }
}
