import Foundation
import HearthAccounts
import HearthAuth
import HearthJSON
import HearthStore
import HearthTesting
import Synchronization
import Testing
@testable import HearthServer

/// The console per namespace, against a live server with a namespaces file (the default,
/// named `main-db`, and `env-b`) and a triggers file: data, rules with their history and
/// the simulator, and triggers with their dead letters, each through the console's `ns`,
/// reach the namespace named and no other. (Its attacks: ConsoleNamespaceAttackTests.)
@Suite(.serialized) struct ConsoleNamespaceLiveTests {
    static let open = #"{"rules": {".read": true, ".write": true}}"#
    /// env-b's rules: only `/x` readable by anyone, a doc when its data says it is public.
    static let rulesB = #"{"rules": {".write": true, "x": {".read": true}, "docs": {"$id": {".read": "data.child('public').val() === true"}}}}"#

    /// A server whose namespaces file lists `env-b`; with `triggerPort`, a trigger on
    /// `/items/{id}` (retry false) posts to that port.
    static func server(triggerPort: Int? = nil) throws -> LiveServer {
        try LiveServer(rules: open) { configuration in
            configuration.auth.acceptEmulatorOwner = true
            let folder = (configuration.rulesPath as NSString).deletingLastPathComponent
            try? writeFile(folder + "/b.json", rulesB)
            try? writeFile(folder + "/namespaces.json", #"{"default": "main-db", "namespaces": {"env-b": {"rules": "b.json"}}}"#)
            configuration.namespacesFile = folder + "/namespaces.json"
            if let triggerPort {
                try? writeFile(folder + "/triggers.json", """
                    {"triggers": [{"name": "item_written", "event": "written", "ref": "/items/{id}", "url": "http://127.0.0.1:\(triggerPort)/hook"}]}
                    """)
                configuration.triggersPath = folder + "/triggers.json"
            }
        }
    }

    @Test func theNamespacesAreListedTheDefaultFirst() async throws {
        let server = try Self.server()
        let console = try ConsoleClient(server)
        let listed = try console.call("GET", "namespaces")
        #expect(listed.status == 200)
        #expect(listed.json == .object(["namespaces": [["name": "", "default": true], ["name": "env-b", "default": false]]]))
        // Administrators, sessions, app users and metrics are the server's: no `ns`.
        for endpoint in ["namespaces?ns=env-b", "session?ns=env-b", "users?ns=env-b", "metrics?ns=env-b"] {
            let refused = try console.call("GET", endpoint)
            #expect(refused.status == 400 && refused.error?.contains("server's") == true, "\(endpoint): \(refused)")
        }
        await server.stop()
    }

    @Test func dataWrittenInTheSecondNamespaceIsOnlyThere() async throws {
        let server = try Self.server()
        let console = try ConsoleClient(server)
        #expect(try console.call("PUT", "rest/x.json?ns=env-b", body: #""b""#).status == 200)
        #expect(try console.call("PUT", "rest/x.json", body: #""default""#).status == 200)
        #expect(try server.request("GET", "/x.json?ns=env-b").body == #""b""#)
        #expect(try server.request("GET", "/x.json").body == #""default""#)
        #expect(try console.call("GET", "rest/x.json?ns=env-b").json == "b")
        #expect(try console.call("GET", "rest/x.json?ns=main-db").json == "default")  // the default's own name
        // Shallow reads (the Data screen's browsing) and deletes are per namespace too.
        #expect(try console.call("PUT", "rest/tree/a.json?ns=env-b", body: "1").status == 200)
        #expect(try console.call("GET", "rest/.json?ns=env-b&shallow=true").json == .object(["x": true, "tree": true]))
        #expect(try console.call("GET", "rest/.json?shallow=true").json == .object(["x": true]))
        #expect(try console.call("DELETE", "rest/x.json?ns=env-b").status == 200)
        #expect(try server.request("GET", "/x.json?ns=env-b").body == "null")
        #expect(try server.request("GET", "/x.json").body == #""default""#)
        await server.stop()
    }

    @Test func rulesReplacedInTheSecondNamespaceChangeOnlyItsRulesAndHistory() async throws {
        let server = try Self.server()
        let console = try ConsoleClient(server)
        #expect(try console.call("GET", "rules?ns=env-b").json?.objectValue?["text"] == .string(Self.rulesB))
        #expect(try console.call("GET", "rules").json?.objectValue?["text"] == .string(Self.open))
        let historyDefault = try console.call("GET", "rules/history").json
        let historyB = try #require(try console.call("GET", "rules/history?ns=env-b").json?.arrayValue)
        let closed = #"{"rules": {".read": true, ".write": false}}"#
        #expect(try console.call("PUT", "rules?ns=env-b", body: Self.text(closed)).status == 200)
        #expect(try console.call("GET", "rules?ns=env-b").json?.objectValue?["text"] == .string(closed))
        #expect(try console.call("GET", "rules").json?.objectValue?["text"] == .string(Self.open))
        let after = try #require(try console.call("GET", "rules/history?ns=env-b").json?.arrayValue)
        #expect(after.count == historyB.count + 1)
        #expect(after.first?.objectValue?["text"] == .string(closed) && after.first?.objectValue?["savedBy"] == "root@example.com")
        #expect(try console.call("GET", "rules/history").json == historyDefault)
        // The running rules changed in env-b only.
        #expect(try server.request("PUT", "/y.json?ns=env-b", "1").status == 401)
        #expect(try server.request("PUT", "/y.json", "1").status == 200)
        await server.stop()
    }

    @Test func theSimulatorUsesTheSecondNamespacesRulesAndData() async throws {
        let server = try Self.server()
        let console = try ConsoleClient(server)
        #expect(try server.request("PUT", "/docs/a.json?ns=env-b", #"{"public": true}"#).status == 200)
        #expect(try server.request("PUT", "/docs/c.json", #"{"public": true}"#).status == 200)  // the default's data
        func allowed(_ path: String, _ ns: String?) throws -> JSONValue? {
            let answer = try console.call("POST", "rules/simulate" + (ns.map { "?ns=" + $0 } ?? ""),
                                          body: #"{"operation": "read", "path": "\#(path)", "auth": null}"#)
            return answer.json?.objectValue?["allowed"]
        }
        #expect(try allowed("/secret", "env-b") == false)
        #expect(try allowed("/secret", nil) == true)  // the default's rules are open
        #expect(try allowed("/docs/a", "env-b") == true)  // env-b's data says public
        #expect(try allowed("/docs/c", "env-b") == false)  // public only in the default's data
        let trace = try console.call("POST", "rules/simulate?ns=env-b", body: #"{"operation": "read", "path": "/docs/a", "auth": null}"#)
        #expect(trace.json?.objectValue?["trace"]?.arrayValue?.contains { $0.stringValue?.contains("/rules/docs/$id/.read") == true } == true,
                "\(trace)")
        await server.stop()
    }

    @Test func triggersListTheSecondNamespacesTriggersAndDeadLetters() async throws {
        let received = Counter()
        let receiver = try LoopbackListener { socket in
            guard socket.readRequest() != nil else { return }
            received.add()
            try? socket.respond(500, "refused")
        }
        defer { receiver.stop() }
        let server = try Self.server(triggerPort: receiver.port)
        let console = try ConsoleClient(server)
        #expect(try server.request("PUT", "/items/b.json?ns=env-b", "1").status == 200)
        var dead: [JSONValue] = []
        try pollUntil("env-b's dead letter") {
            dead = try console.call("GET", "triggers?ns=env-b").json?.objectValue?["dead"]?.arrayValue ?? []
            return !dead.isEmpty
        }
        let letter = try #require(dead.first?.objectValue)
        #expect(letter["trigger"] == "item_written" && letter["ref"] == "/items/b")
        let listedB = try #require(try console.call("GET", "triggers?ns=env-b").json?.objectValue)
        #expect(listedB["configured"] == true)
        #expect(listedB["triggers"]?.arrayValue?.first?.objectValue?["dead"] == 1)
        let listedDefault = try #require(try console.call("GET", "triggers").json?.objectValue)
        #expect(listedDefault["dead"] == .array([]) && listedDefault["triggers"]?.arrayValue?.first?.objectValue?["dead"] == 0)
        // A resend reaches the dead letters of the namespace named only.
        let id = try #require(letter["id"])
        #expect(try console.call("POST", "triggers/resend", body: #"{"ids": [\#(JSONWriter.string(id))]}"#).json == .object(["resent": 0]))
        #expect(try console.call("POST", "triggers/resend?ns=env-b", body: #"{"ids": [\#(JSONWriter.string(id))]}"#).json == .object(["resent": 1]))
        try pollUntil("the resent event") { received.value >= 2 }
        await server.stop()
    }

    static func text(_ rules: String) -> String {
        JSONWriter.string(.object(["text": .string(rules)]))
    }
}

/// Requests a receiver saw.
final class Counter: Sendable {
    private let count = Mutex(0)
    func add() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}

/// A signed-in console administrator (root@example.com, added to the server's store) on a live server.
struct ConsoleClient {
    let port: Int
    let cookie: String
    let csrf: String

    init(_ server: LiveServer) throws {
        let store = try Engines.open(try server.service.configuration.storeLocation())
        defer { store.close() }
        try ConsoleAccounts(store: store.consoleRecords, hasher: PasswordHasher(), clock: WallClock.milliseconds)
            .add(email: "root@example.com", password: "correct horse battery")
        let (head, body) = try server.exchange("POST", "/console/api/session", #"{"email":"root@example.com","password":"correct horse battery"}"#,
                                               headers: [("Content-Type", "application/json")])
        guard let cookie = head.header("Set-Cookie")?.split(separator: ";").first,
              case .string(let csrf)? = try JSONParser.parse(Array(body.utf8)).objectValue?["csrf"] else {
            throw LiveClientError("console sign-in failed: \(head.status) \(body)")
        }
        (port, self.cookie, self.csrf) = (server.port, String(cookie), csrf)
    }

    struct Answer: CustomStringConvertible {
        let status: Int
        let body: String
        var json: JSONValue? { try? JSONParser.parse(Array(body.utf8)) }
        var error: String? { json?.objectValue?["error"]?.stringValue }
        var description: String { "\(status) \(body)" }
    }

    /// `method` on `/console/api/<endpoint>` with the session's cookie (and its CSRF token unless `csrf` is false).
    func call(_ method: String, _ endpoint: String, body: String? = nil, csrf: Bool = true, cookie: Bool = true) throws -> Answer {
        var headers = [("Content-Type", "application/json")]
        if cookie { headers.append(("Cookie", self.cookie)) }
        if csrf { headers.append(("X-CSRF-Token", self.csrf)) }
        let (status, text) = try liveRequest(port: port, method, "/console/api/" + endpoint, body: body, headers: headers)
        return Answer(status: status, body: text)
    }
}
