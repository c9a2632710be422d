import Foundation
import HearthJSON
@testable import HearthServer
import HearthTesting
import Testing

/// In emulator mode (`--accept-emulator-owner`) Hearth answers
/// `@firebase/rules-unit-testing`'s REST calls as the database emulator does
/// (docs/protocol/emulator.md §4.7): a rules replacement with `Bearer owner` creates its
/// namespace, the SDKs' unsigned mock tokens are users, and only from this machine.
@Suite(.serialized) struct EmulatorModeLiveTests {
    static let owner = [("Authorization", "Bearer owner")]
    static let userRules = #"{"rules": {"users": {"$uid": {".read": "auth.uid == $uid", ".write": "auth.uid == $uid && (!newData.hasChild('role') || auth.token.admin == true)"}}}}"#

    static func emulator() throws -> LiveServer {
        try LiveServer(rules: #"{"rules": {".read": false, ".write": false}}"#) { $0.auth.acceptEmulatorOwner = true }
    }

    /// What `createMockUserToken` makes: header `{"alg":"none","type":"JWT"}`, no signature.
    static func mockToken(uid: String, claims: [String: Any] = [:]) -> String {
        var payload: [String: Any] = ["iss": "https://securetoken.google.com/demo", "aud": "demo", "iat": 0, "exp": 3600,
                                      "auth_time": 0, "sub": uid, "user_id": uid,
                                      "firebase": ["sign_in_provider": "custom", "identities": [String: Any]()]]
        payload.merge(claims) { $1 }
        func part(_ object: Any) -> String {
            let data = try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
            return data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
        }
        return part(["alg": "none", "type": "JWT"]) + "." + part(payload) + "."
    }

    @Test func aRulesReplacementCreatesItsNamespace() async throws {
        let server = try Self.emulator()
        let put = try server.request("PUT", "/.settings/rules.json?ns=env-one", Self.userRules, headers: Self.owner)
        #expect(put.status == 200 && put.body == #"{"status":"ok"}"#, "\(put)")
        let alice = [("Authorization", "Bearer " + Self.mockToken(uid: "alice"))]
        #expect(try server.request("PUT", "/users/alice.json?ns=env-one", #"{"name":"A"}"#, headers: alice).status == 200)
        #expect(try server.request("PUT", "/users/bob.json?ns=env-one", #"{"name":"A"}"#, headers: alice).status == 401)
        // A claim the rules look at (`authenticatedContext('alice', {admin: true})`).
        #expect(try server.request("PUT", "/users/alice.json?ns=env-one", #"{"role":"x"}"#, headers: alice).status == 401)
        let admin = [("Authorization", "Bearer " + Self.mockToken(uid: "alice", claims: ["admin": true]))]
        #expect(try server.request("PUT", "/users/alice.json?ns=env-one", #"{"role":"x"}"#, headers: admin).status == 200)
        // ?auth= as well as Bearer; the default namespace keeps its deny-all rules.
        #expect(try server.request("GET", "/users/alice.json?ns=env-one&auth=" + Self.mockToken(uid: "alice")).body == #"{"role":"x"}"#)
        #expect(try server.request("GET", "/users/alice.json", headers: alice).status == 401)
        await server.stop()
    }

    /// Bad rules are a 400 with the compile errors, as for the default namespace, and
    /// create nothing.
    @Test func badRulesCreateNothing() async throws {
        let server = try Self.emulator()
        let bad = try server.request("PUT", "/.settings/rules.json?ns=env-bad", #"{"rules": {".read": "auth.uid =="}}"#, headers: Self.owner)
        #expect(bad.status == 400, "\(bad)")
        #expect(try JSONParser.parse(Array(bad.body.utf8)).objectValue?["error"]?.stringValue?.contains("Line 1") == true, "\(bad.body)")
        // Not created by them: its first use creates it with the server's (deny-all) rules file.
        let rules = try server.request("GET", "/.settings/rules.json?ns=env-bad", headers: Self.owner)
        #expect(rules.body.contains(#"".write": false"#), "\(rules)")
        // Not an admin: 401, nothing created.
        let user = [("Authorization", "Bearer " + Self.mockToken(uid: "alice"))]
        #expect(try server.request("PUT", "/.settings/rules.json?ns=env-x", #"{"rules": {}}"#, headers: user).status == 401)
        #expect(try server.request("GET", "/.settings/rules.json?ns=env-x", headers: Self.owner).body.contains(#"".write": false"#))
        await server.stop()
    }

    /// Names: lowercase letters, digits and hyphens, at most `NamespaceName.maxBytes`.
    @Test func namesAreChecked() async throws {
        let server = try Self.emulator()
        let rules = #"{"rules": {".read": true, ".write": true}}"#
        let longest = String(repeating: "a", count: NamespaceName.maxBytes)
        #expect(try server.request("PUT", "/.settings/rules.json?ns=\(longest)", rules, headers: Self.owner).status == 200)
        for name in [longest + "a", "Upper", "-leading", "under_score"] {
            let answer = try server.request("PUT", "/.settings/rules.json?ns=\(name)", rules, headers: Self.owner)
            #expect(answer.status == 400 && answer.body.contains("\"error\""), "\(name): \(answer)")
        }
        await server.stop()
    }

    /// At most `NamespaceRegistry.maxNamespaces` besides the default; the next is refused
    /// (403) and the ones there keep working. On SQLite only: on PostgreSQL each namespace
    /// holds its own connections, more than the test cluster takes for one test.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["HEARTH_TEST_STORE"] != "postgres"))
    func atMostMaxNamespacesAreCreated() async throws {
        let server = try Self.emulator()
        let rules = #"{"rules": {".read": true, ".write": true}}"#
        for index in 0..<NamespaceRegistry.maxNamespaces {
            #expect(try server.request("PUT", "/.settings/rules.json?ns=env-\(index)", rules, headers: Self.owner).status == 200)
        }
        let refused = try server.request("PUT", "/.settings/rules.json?ns=env-last", rules, headers: Self.owner)
        #expect(refused.status == 403 && refused.body.contains("\"error\""), "\(refused)")
        #expect(try server.request("PUT", "/x.json?ns=env-0", "1").status == 200)
        #expect(try server.request("GET", "/x.json?ns=env-0").body == "1")
        await server.stop()
    }

    /// `clearDatabase()`: `set(ref(db), null)` as admin empties that namespace at once,
    /// and no other.
    @Test func clearingANamespaceIsImmediateAndItsOwn() async throws {
        let server = try Self.emulator()
        let open = #"{"rules": {".read": true, ".write": true}}"#
        for name in ["env-one", "env-two"] {
            #expect(try server.request("PUT", "/.settings/rules.json?ns=\(name)", open, headers: Self.owner).status == 200)
            #expect(try server.request("PUT", "/a/b.json?ns=\(name)", #""\#(name)""#).status == 200)
        }
        #expect(try server.request("PUT", "/.json?ns=env-one", "null", headers: Self.owner).status == 200)
        #expect(try server.request("GET", "/.json?ns=env-one").body == "null")
        #expect(try server.request("GET", "/a/b.json?ns=env-two").body == #""env-two""#)
        await server.stop()
    }

    /// Mock tokens are users only in emulator mode and only straight from this machine.
    @Test func mockTokensOnlyInEmulatorModeAndOnlyLocally() async throws {
        let open = #"{"rules": {".read": "auth != null", ".write": "auth != null"}}"#
        let token = Self.mockToken(uid: "alice")
        let emulator = try LiveServer(rules: open) { $0.auth.acceptEmulatorOwner = true }
        #expect(try emulator.request("PUT", "/x.json", "1", headers: [("Authorization", "Bearer " + token)]).status == 200)
        let proxied = try emulator.request("PUT", "/x.json", "1", headers: [("Authorization", "Bearer " + token), ("X-Forwarded-For", "203.0.113.9")])
        #expect(proxied.status == 401, "\(proxied)")
        // A signed-looking token with alg none but a signature part is no mock token.
        #expect(try emulator.request("PUT", "/x.json", "1", headers: [("Authorization", "Bearer " + token + "c2ln")]).status == 401)
        await emulator.stop()
        let production = try LiveServer(rules: open)
        #expect(try production.request("PUT", "/x.json", "1", headers: [("Authorization", "Bearer " + token)]).status == 401)
        await production.stop()
    }

    /// The namespaces file: names checked, at most `NamespaceRegistry.maxNamespaces`.
    @Test func theNamespacesFileIsChecked() throws {
        func parse(_ text: String) throws(NamespacesFile.Invalid) -> NamespacesFile {
            try NamespacesFile.parse(Array(text.utf8), folder: "/etc/hearth", source: "ns.json")
        }
        let entries = { (count: Int) in (0..<count).map { #""ns-\#($0)": {"rules": "r.json"}"# }.joined(separator: ",") }
        let full = try parse(#"{"namespaces": {\#(entries(NamespaceRegistry.maxNamespaces))}}"#)
        #expect(full.namespaces.count == NamespaceRegistry.maxNamespaces && full.namespaces["ns-0"] == "/etc/hearth/r.json")
        #expect(throws: NamespacesFile.Invalid.self) { try parse(#"{"namespaces": {\#(entries(NamespaceRegistry.maxNamespaces + 1))}}"#) }
        let longest = String(repeating: "a", count: NamespaceName.maxBytes)
        #expect(try parse(#"{"namespaces": {"\#(longest)": {"rules": "/r.json"}}}"#).namespaces[longest] == "/r.json")
        for bad in [#"{"namespaces": {"\#(longest)a": {"rules": "r.json"}}}"#, #"{"namespaces": {"Upper": {"rules": "r.json"}}}"#,
                    #"{"namespaces": {"a": {}}}"#, #"{"namespaces": []}"#, #"{"other": 1}"#, #"{"default": "a", "namespaces": {"a": {"rules": "r"}}}"#] {
            #expect(throws: NamespacesFile.Invalid.self, "\(bad)") { try parse(bad) }
        }
    }
}
