import HearthJSON
import HearthTesting
import Testing
@testable import HearthServer

/// Attacks on the console's `ns`: the session and the CSRF token guard every namespace
/// alike (a refusal reveals no namespace), a name not served or not valid is refused and
/// creates nothing (in emulator mode either), and a call acts on one namespace only.
@Suite(.serialized) struct ConsoleNamespaceAttackTests {
    @Test func theSessionAndTheCSRFTokenGuardEveryNamespace() async throws {
        let server = try ConsoleNamespaceLiveTests.server()
        let console = try ConsoleClient(server)
        // Without a session: 401 alike for a namespace served and one not (nothing learnt).
        for endpoint in ["rest/x.json?ns=env-b", "rest/x.json?ns=nowhere", "rules?ns=env-b", "triggers?ns=env-b", "namespaces"] {
            #expect(try console.call("GET", endpoint, cookie: false).status == 401, "\(endpoint)")
        }
        #expect(try console.call("PUT", "rest/x.json?ns=env-b", body: "1", cookie: false).status == 401)
        // A write without the CSRF token changes nothing in the namespace named.
        let closed = ConsoleNamespaceLiveTests.text(#"{"rules": {".write": false}}"#)
        #expect(try console.call("PUT", "rest/x.json?ns=env-b", body: "1", csrf: false).status == 403)
        #expect(try console.call("PUT", "rules?ns=env-b", body: closed, csrf: false).status == 403)
        #expect(try console.call("POST", "triggers/resend?ns=env-b", body: #"{"ids": [1]}"#, csrf: false).status == 403)
        #expect(try server.request("GET", "/x.json?ns=env-b").body == "null")
        #expect(try console.call("GET", "rules?ns=env-b").json?.objectValue?["text"] == .string(ConsoleNamespaceLiveTests.rulesB))
        await server.stop()
    }

    @Test func anUnknownOrInvalidNamespaceIsRefusedAndNeverCreated() async throws {
        let server = try ConsoleNamespaceLiveTests.server()
        let console = try ConsoleClient(server)
        let rules = ConsoleNamespaceLiveTests.text(ConsoleNamespaceLiveTests.open)
        for (method, endpoint, body) in [("GET", "rest/x.json?ns=nowhere", nil), ("PUT", "rest/x.json?ns=nowhere", "1"),
                                         ("GET", "rules?ns=nowhere", nil), ("PUT", "rules?ns=nowhere", rules),
                                         ("GET", "rules/history?ns=nowhere", nil), ("GET", "triggers?ns=nowhere", nil)] {
            let refused = try console.call(method, endpoint, body: body)
            #expect(refused.status == 404 && refused.error == #"Namespace "nowhere" is not served here"#, "\(endpoint): \(refused)")
        }
        let longest = String(repeating: "a", count: NamespaceName.maxBytes + 1)
        for query in ["ns=Not_Valid", "ns=", "ns", "ns=-a", "ns=env-b&ns=main-db", "ns=\(longest)", "ns=env%2Db"] {
            let refused = try console.call("GET", "rest/x.json?" + query)
            #expect(refused.status == 400 && refused.error != nil, "\(query): \(refused)")
        }
        // One name at the limit is a valid name, just not served.
        #expect(try console.call("GET", "rest/x.json?ns=" + String(longest.dropFirst())).status == 404)
        #expect(try console.call("GET", "namespaces").json?.objectValue?["namespaces"]?.arrayValue?.count == 2)
        #expect(try server.request("GET", "/x.json?ns=nowhere").status == 404)
        await server.stop()
    }

    /// In emulator mode a REST rules replacement creates a namespace (then the console
    /// lists it and reaches it); the console's own calls never create one.
    @Test func inEmulatorModeTheConsoleCreatesNoNamespace() async throws {
        let server = try LiveServer(rules: ConsoleNamespaceLiveTests.open) { $0.auth.acceptEmulatorOwner = true }
        let console = try ConsoleClient(server)
        let rules = ConsoleNamespaceLiveTests.text(ConsoleNamespaceLiveTests.open)
        #expect(try console.call("PUT", "rules?ns=fresh", body: rules).status == 404)
        #expect(try console.call("PUT", "rest/x.json?ns=fresh", body: "1").status == 404)
        #expect(try console.call("GET", "namespaces").json == .object(["namespaces": [["name": "", "default": true]]]))
        #expect(try server.request("GET", "/x.json").body == "null")  // nor written into the default
        let made = #"{"rules": {".read": true, ".write": true, "made": {".read": false}}}"#
        #expect(try server.request("PUT", "/.settings/rules.json?ns=fresh", made, headers: [("Authorization", "Bearer owner")]).status == 200)
        #expect(try console.call("GET", "namespaces").json?.objectValue?["namespaces"]?.arrayValue?.last == ["name": "fresh", "default": false])
        #expect(try console.call("GET", "rules?ns=fresh").json?.objectValue?["text"] == .string(made))
        await server.stop()
    }
}
