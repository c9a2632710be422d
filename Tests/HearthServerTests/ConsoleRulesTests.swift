import HearthAccounts
import HearthHTTP
import HearthJSON
import HearthStore
import Testing
@testable import HearthServer

/// The console's Rules API at the router: compile errors with line and
/// column, saving through the rules settings (and only with the CSRF token), the history of
/// saved versions (bounded), and the simulator's decisions with their trace.
@Suite struct ConsoleRulesTests {
    static let rules = """
        {
          "rules": {
            "users": { "$uid": { ".read": "auth != null && auth.uid === $uid",
                                 ".write": "auth != null && auth.uid === $uid && (auth.token.premium === true || !newData.hasChild('badge'))" } }
          }
        }
        """
    let h: RouterHarness
    let cookie: String
    let csrf: String

    init() async throws {
        var settings = AuthSettings()
        settings.acceptEmulatorOwner = true  // `Bearer owner`: an admin credential for `/.settings/rules.json`
        h = try RouterHarness(settings: settings, console: true, rulesFile: Self.rules)
        try h.router.context.console!.add(email: "root@example.com", password: "correct horse battery")
        let signIn = await h.send("POST", "/console/api/session", #"{"email":"root@example.com","password":"correct horse battery"}"#,
                                  headers: [("Content-Type", "application/json")])
        cookie = String(try #require(signIn.headers["Set-Cookie"]?.split(separator: ";").first))
        csrf = try #require(signIn.json?.objectValue?["csrf"]?.stringValue)
    }

    func call(_ method: String, _ endpoint: String, _ body: JSONValue? = nil, csrf: Bool = true) async -> HTTPResponse {
        var headers = [("Cookie", cookie), ("Content-Type", "application/json")]
        if csrf { headers.append(("X-CSRF-Token", self.csrf)) }
        return await h.send(method, "/console/api/" + endpoint, body.map { String(decoding: JSONWriter.write($0), as: UTF8.self) }, headers: headers)
    }

    @Test func compileErrorsCarryTheirLineAndColumn() async throws {
        let broken = "{\n  \"rules\": {\n    \".read\": \"auth.uid ===\"\n  }\n}\n"
        let checked = await call("POST", "rules/check", ["text": .string(broken)])
        let first = try #require(checked.json?.objectValue?["errors"]?.arrayValue?.first?.objectValue)
        #expect(first["line"] == .int(3))
        if case .int(let column)? = first["column"] { #expect(column > 0) } else { Issue.record("no column: \(first)") }
        #expect(await call("POST", "rules/check", ["text": .string(Self.rules)]).json?.objectValue?["errors"] == .array([]))
        // A broken file is not saved.
        let refused = await call("PUT", "rules", ["text": .string(broken)])
        #expect(refused.status == 400 && refused.json?.objectValue?["errors"]?.arrayValue?.isEmpty == false)
        #expect(await call("GET", "rules").json?.objectValue?["text"] == .string(Self.rules))
    }

    @Test func savingGoesThroughTheRulesSettingsAndIsKeptInTheHistory() async throws {
        let open = #"{"rules": {".read": true, ".write": true}}"#
        #expect(await call("PUT", "rules", ["text": .string(open)], csrf: false).status == 403)  // no CSRF token
        for index in 0..<(RulesHistory.kept + 2) {
            let text = #"{"rules": {".read": true, ".write": \#(index % 2 == 0 ? "true" : "false")}}"#
            #expect(await call("PUT", "rules", ["text": .string(text)]).status == 200)
        }
        #expect(await call("PUT", "rules", ["text": .string(open)]).status == 200)
        #expect(await call("GET", "rules").json?.objectValue?["text"] == .string(open))
        let history = try #require(await call("GET", "rules/history").json?.arrayValue)
        #expect(history.count == RulesHistory.kept)
        #expect(history.first?.objectValue?["text"] == .string(open))
        #expect(history.first?.objectValue?["savedBy"] == "root@example.com")
        // The running rules changed too: a signed-out REST write is allowed now.
        #expect(await h.send("PUT", "/anything.json", "1").status == 200)
    }

    /// Rules replaced through `PUT /.settings/rules.json` with an admin credential, not in
    /// the console, are in the console's history too, each version with who changed it; a
    /// dry run, a refused file and a save that changes nothing add no version.
    @Test func rulesChangedOutsideTheConsoleAreInTheHistoryWithTheirAuthor() async throws {
        let owner = [("Authorization", "Bearer owner")]
        let byToken = #"{"rules": {".read": true}}"#
        #expect(await h.send("PUT", "/.settings/rules.json", byToken, headers: owner).status == 200)
        #expect(await h.send("PUT", "/.settings/rules.json?dryRun=true", #"{"rules": {}}"#, headers: owner).status == 200)
        #expect(await h.send("PUT", "/.settings/rules.json", #"{"rules": {".read": "auth.uid =="}}"#, headers: owner).status == 400)
        #expect(await h.send("PUT", "/.settings/rules.json", #"{"rules": {}}"#).status == 401)  // no credential
        let byConsole = #"{"rules": {".read": false}}"#
        #expect(await call("PUT", "rules", ["text": .string(byConsole)]).status == 200)
        #expect(await h.send("PUT", "/.settings/rules.json", byConsole, headers: owner).status == 200)  // the same text again
        let history = try #require(await call("GET", "rules/history").json?.arrayValue).compactMap(\.objectValue)
        #expect(history.map { $0["text"] } == [.string(byConsole), .string(byToken)])
        #expect(history.map { $0["savedBy"] } == ["root@example.com", .string(RulesHistory.Author.adminToken.description)])
        #expect(RulesHistory.Author.adminToken.description.hasPrefix("admin token"))
    }

    @Test func theSimulatorDecidesWithATrace() async throws {
        func simulate(_ question: JSONValue) async throws -> (allowed: Bool, trace: [String]) {
            let answer = try #require(await call("POST", "rules/simulate", question).json?.objectValue)
            let trace = answer["trace"]?.arrayValue?.compactMap(\.stringValue) ?? []
            return (answer["allowed"] == .bool(true), trace)
        }
        let signedOut = try await simulate(["operation": "read", "path": "/users/alice", "auth": .null])
        #expect(!signedOut.allowed && !signedOut.trace.isEmpty)
        let alice = try await simulate(["operation": "read", "path": "/users/alice", "auth": ["uid": "alice"]])
        #expect(alice.allowed && alice.trace.contains { $0.contains("/rules/users/$uid/.read") }, "\(alice.trace)")
        let badge = try await simulate(["operation": "set", "path": "/users/alice", "auth": ["uid": "alice"], "value": ["badge": "gold"]])
        #expect(!badge.allowed)
        let premium = try await simulate(["operation": "set", "path": "/users/alice",
                                          "auth": ["uid": "alice", "claims": ["premium": true]], "value": ["badge": "gold"]])
        #expect(premium.allowed, "\(premium.trace)")
        let update = try await simulate(["operation": "update", "path": "/users/alice", "auth": ["uid": "alice"], "value": ["name": "A"]])
        #expect(update.allowed)
        #expect(await call("POST", "rules/simulate", ["operation": "delete", "path": "/x"]).status == 400)
        #expect(await call("POST", "rules/simulate", ["operation": "read", "path": "/a.b"]).status == 400)
        // Simulating writes nothing.
        #expect(try h.store.readSync { try $0.exists(at: .root) } == false)
    }

    /// An `auth` (or its provider or claims) of the wrong type is refused, not simulated as
    /// signed out or without claims, which would show a decision for another caller.
    @Test func theSimulatorRefusesAnAuthOfTheWrongType() async throws {
        let refused: [(JSONValue, String)] = [
            ("alice", "auth must be null (signed out) or an object with a uid"),
            (["uid": "alice", "claims": "premium"], "auth's claims must be an object"),
            (["uid": "alice", "provider": 5], "auth's provider must be a string"),
        ]
        for (auth, message) in refused {
            let answer = await call("POST", "rules/simulate", ["operation": "read", "path": "/users/alice", "auth": auth])
            #expect(answer.status == 400, "\(auth)")
            #expect(answer.json?.objectValue?["error"] == .string(message), "\(auth): \(answer.text)")
        }
    }
}
