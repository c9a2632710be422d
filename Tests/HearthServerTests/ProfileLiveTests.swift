import Foundation
import HearthJSON
import HearthTesting
import Testing

/// `POST /.profile` against a live server: a known mix over REST, SSE and the wire
/// protocol gives exact counts by kind and path pattern; a denied write appears under its
/// rule; an unindexed query with the `.indexOn` that would serve it; admins only; one
/// window at a time; bounds on the duration; namespaces kept apart.
@Suite struct ProfileLiveTests {
    static let owner = [("Authorization", "Bearer owner")]
    static let rules = #"""
    {"rules": {
      "users": {"$uid": {".read": "auth != null && auth.uid == $uid", ".write": "auth != null && auth.uid == $uid",
                         "favorites": {"$favId": {".validate": "newData.isString()"}}}},
      "items": {".read": true, ".write": true, ".indexOn": ["score"]}
    }}
    """#

    static func json(_ text: String) throws -> JSONValue { try JSONParser.parse(Array(text.utf8)) }

    /// The count of the operations row of `kind` at `path` in `report` (0: no row).
    static func count(_ report: JSONValue, _ kind: String, _ path: String) -> Int64 {
        let rows = report.objectValue?["operations"]?.arrayValue ?? []
        let row = rows.first { $0.objectValue?["kind"]?.stringValue == kind && $0.objectValue?["path"]?.stringValue == path }
        guard case .int(let count)? = row?.objectValue?["count"] else { return 0 }
        return count
    }

    static func start(_ server: LiveServer, _ query: String = "duration=600") throws -> (status: Int, body: String) {
        try server.request("POST", "/.profile?action=start&\(query)", headers: owner)
    }

    @Test func aKnownMixGivesExactCountsByKindAndPattern() async throws {
        let server = try LiveServer(rules: Self.rules) { $0.auth.acceptEmulatorOwner = true }
        let user = try server.anonymousUser()
        let started = try Self.start(server)
        #expect(started.status == 200, "\(started)")
        let stream = try server.stream("/items.json")
        _ = try stream.nextEvent()  // the initial put
        let wire = try WireTestClient(port: server.port)
        #expect(try wire.request("auth", ["cred": .string(user.token)]).objectValue?["s"] == "ok")
        #expect(try wire.request("q", ["p": "/items", "h": ""]).objectValue?["s"] == "ok")
        try wire.waitForPushes(1)  // the listen's initial data
        let auth = "auth=\(user.token)"
        let favorites = "/users/\(user.uid)/favorites"
        for key in ["f1", "f2", "f3"] {
            #expect(try server.request("PUT", "\(favorites)/\(key).json?\(auth)", #""a""#).status == 200)
        }
        #expect(try server.request("PUT", "/users/someone-else/favorites/f1.json?\(auth)", #""a""#).status == 401)
        #expect(try server.request("PUT", "\(favorites)/f9.json?\(auth)", "5").status == 401)
        for _ in 0..<2 { #expect(try server.request("GET", "/users/\(user.uid).json?\(auth)").status == 200) }
        let unindexed = try server.request("GET", #"/items.json?orderBy="name"&limitToFirst=1"#)
        #expect(unindexed.status == 400 && unindexed.body.contains(".indexOn"))
        #expect(try server.request("PATCH", "/items.json", #"{"i1": {"score": 1}}"#).status == 200)
        #expect(try server.request("POST", "/items.json", #"{"score": 2}"#).status == 200)
        #expect(try wire.request("g", ["p": .string("/users/\(user.uid)"), "q": [:]]).objectValue?["s"] == "ok")
        #expect(try wire.request("p", ["p": .string("\(favorites)/f4"), "d": "b"]).objectValue?["s"] == "ok")
        #expect(try wire.request("m", ["p": "/items", "d": ["i2/score": 3]]).objectValue?["s"] == "ok")
        for _ in 0..<3 { _ = try stream.nextEvent() }  // the three changes to /items
        try wire.waitForPushes(4)

        let stopped = try server.request("POST", "/.profile?action=stop", headers: Self.owner)
        #expect(stopped.status == 200, "\(stopped)")
        let report = try Self.json(stopped.body)
        #expect(Self.count(report, "write", "/users/$uid/favorites/$favId") == 6)
        #expect(Self.count(report, "read", "/users/$uid") == 3)
        #expect(Self.count(report, "read", "/items") == 1)
        #expect(Self.count(report, "update", "/items") == 2)
        // A POST counts at the location posted to.
        #expect(Self.count(report, "write", "/items") == 1)
        #expect(Self.count(report, "listen", "/items") == 2)
        #expect(Self.count(report, "listen-broadcast", "/items") == 6)
        #expect(Self.count(report, "auth", "(rest)") == 7)
        #expect(Self.count(report, "auth", "(wire)") == 1)
        #expect(report.objectValue?["operations"]?.arrayValue?.count == 9, "\(stopped.body)")
        let denials = report.objectValue?["denials"]?.arrayValue ?? []
        #expect(Set(denials) == [
            .object(["operation": "write", "rule": "/rules/users/$uid/.write", "path": "/users/$uid/favorites/$favId", "count": 1]),
            .object(["operation": "write", "rule": "/rules/users/$uid/favorites/$favId/.validate",
                     "path": "/users/$uid/favorites/$favId", "count": 1]),
        ], "\(denials)")
        #expect(report.objectValue?["unindexedQueries"] == .array([.object(["path": "/items", "indexOn": "name", "count": 1])]))
        let rules = report.objectValue?["rules"]?.arrayValue?.compactMap { $0.objectValue?["rule"]?.stringValue } ?? []
        #expect(rules.contains("/rules/users/$uid/.write") && rules.contains("/rules/users/$uid/.read"), "\(rules)")
        #expect(report.objectValue?["slowest"]?.arrayValue?.count == 10)
        // Which node answered; on PostgreSQL each node profiles only itself, and says so.
        let node = report.objectValue?["node"]?.objectValue ?? [:]
        let shared = ProcessInfo.processInfo.environment["HEARTH_TEST_STORE"] == "postgres"
        #expect(node["hostname"] != nil && node["sharedEngine"] == .bool(shared) && (node["id"] != nil) == shared, "\(node)")
        // Stopped: nothing more is recorded, and there is nothing left to stop.
        #expect(try server.request("POST", "/.profile?action=stop", headers: Self.owner).status == 409)
        stream.close()
        await server.stop()
    }

    @Test func onlyAdminsProfileAndOneWindowRunsAtATime() async throws {
        let server = try LiveServer(rules: Self.rules) { $0.auth.acceptEmulatorOwner = true }
        let user = try server.anonymousUser()
        #expect(try server.request("POST", "/.profile?action=start&duration=5").status == 401)
        #expect(try server.request("POST", "/.profile?action=start&duration=5", headers: [("Authorization", "Bearer \(user.token)")]).status == 401)
        #expect(try server.request("POST", "/.profile?action=stop&auth=\(user.token)").status == 401)
        #expect(try server.request("GET", "/.profile?action=status", headers: Self.owner).status == 405)
        for bad in ["duration=0", "duration=3601", "duration=abc", "duration=", ""] {
            let answer = try Self.start(server, bad)
            #expect(answer.status == 400 && answer.body.contains("3600"), "\(bad): \(answer)")
        }
        #expect(try server.request("POST", "/.profile?action=rewind", headers: Self.owner).status == 400)
        #expect(try Self.start(server, "duration=3600").status == 200)
        let second = try Self.start(server, "duration=5")
        #expect(second.status == 409 && second.body.contains("already recording"), "\(second)")
        let status = try Self.json(try server.request("POST", "/.profile?action=status", headers: Self.owner).body)
        #expect(status.objectValue?["recording"] == .bool(true))
        #expect(try server.request("POST", "/.profile?action=stop", headers: Self.owner).status == 200)
        #expect(try Self.start(server, "duration=5").status == 200)
        await server.stop()
    }

    @Test func eachNamespaceHasItsOwnProfileAndAnUnknownOneIsNotFound() async throws {
        let server = try NamespaceLiveTests.serverWithFile()
        #expect(try server.request("POST", "/.profile?ns=env-a&action=start&duration=60", headers: Self.owner).status == 200)
        #expect(try server.request("POST", "/.profile?ns=elsewhere&action=start&duration=60", headers: Self.owner).status == 404)
        // env-a's rules name no child: every key is past them.
        #expect(try server.request("PUT", "/x.json?ns=env-a", "1").status == 200)
        #expect(try server.request("PUT", "/x.json", "2").status == 200)
        let report = try Self.json(try server.request("POST", "/.profile?ns=env-a&action=stop", headers: Self.owner).body)
        #expect(report.objectValue?["namespace"] == "env-a")
        #expect(report.objectValue?["operations"]?.arrayValue?.count == 1 && Self.count(report, "write", "/$other") == 1)
        // The default namespace was never started.
        #expect(try server.request("POST", "/.profile?action=stop", headers: Self.owner).status == 409)
        await server.stop()
        // In emulator mode a name not used yet is not created by profiling it.
        let emulator = try NamespaceLiveTests.emulator()
        #expect(try emulator.request("POST", "/.profile?ns=fresh&action=start&duration=5", headers: Self.owner).status == 404)
        await emulator.stop()
    }
}
