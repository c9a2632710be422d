import Foundation
import HearthJSON
import HearthTesting
import HearthTriggers
import Testing
@testable import HearthServer

/// The console's Triggers screen against a live server, per namespace: a trigger's oldest
/// pending event (id, ref, attempts, last error), and parking it (CSRF-checked), which
/// reaches the namespace named only; resending it brings it back under the same id.
@Suite struct ConsoleTriggersParkLiveTests {
    /// Namespaces `env-b` beside the default; a retried trigger on `/items/{id}` whose
    /// receiver is `port`, on which nobody listens (a `RefusingPort`), so its events stay pending.
    static func server(refusing port: Int) throws -> LiveServer {
        try LiveServer(rules: ConsoleNamespaceLiveTests.open) { configuration in
            configuration.auth.acceptEmulatorOwner = true
            let folder = (configuration.rulesPath as NSString).deletingLastPathComponent
            try? writeFile(folder + "/b.json", ConsoleNamespaceLiveTests.open)
            try? writeFile(folder + "/namespaces.json", #"{"namespaces": {"env-b": {"rules": "b.json"}}}"#)
            configuration.namespacesFile = folder + "/namespaces.json"
            try? writeFile(folder + "/triggers.json", """
                {"triggers": [{"name": "items", "event": "written", "ref": "/items/{id}", "url": "http://127.0.0.1:\(port)/hook", "retry": true}]}
                """)
            configuration.triggersPath = folder + "/triggers.json"
        }
    }

    static func row(_ console: ConsoleClient, _ query: String) throws -> [JSONKey: JSONValue] {
        try #require(try console.call("GET", "triggers" + query).json?.objectValue?["triggers"]?.arrayValue?.first?.objectValue)
    }

    @Test func theOldestPendingEventIsShownAndParkedInItsNamespaceOnly() async throws {
        let refusing = try RefusingPort()
        defer { refusing.release() }  // held (and refusing) to the end
        let server = try Self.server(refusing: refusing.port)
        let console = try ConsoleClient(server)
        #expect(try server.request("PUT", "/items/b.json?ns=env-b", "1").status == 200)
        var oldest: [JSONKey: JSONValue] = [:]
        try pollUntil("env-b's failing oldest event") {
            oldest = try Self.row(console, "?ns=env-b")["oldest"]?.objectValue ?? [:]
            return oldest["lastError"] == "connection refused"
        }
        let id = try #require(oldest["id"])
        #expect(oldest["ref"] == "/items/b" && oldest["attempts"] == 0 && oldest["trigger"] == "items")
        #expect(oldest["payload"] == nil)
        #expect(try Self.row(console, "")["oldest"] == nil)

        let body = #"{"ids": [\#(JSONWriter.string(id)), 424242]}"#
        #expect(try console.call("POST", "triggers/park?ns=env-b", body: body, csrf: false).status == 403)
        #expect(try console.call("POST", "triggers/park?ns=env-b", body: #"{"ids": []}"#).status == 400)
        let tooMany = "{\"ids\": [" + (0...ConsoleRoute.maxResendIDs).map(String.init).joined(separator: ",") + "]}"
        #expect(try console.call("POST", "triggers/park?ns=env-b", body: tooMany).status == 413)
        // The default namespace has no such pending event: nothing moves there.
        #expect(try console.call("POST", "triggers/park", body: body).json == .object(["parked": 0, "notPending": [id, 424242]]))
        #expect(try console.call("POST", "triggers/park?ns=env-b", body: body).json == .object(["parked": 1, "notPending": [424242]]))

        let listed = try #require(try console.call("GET", "triggers?ns=env-b").json?.objectValue)
        let letter = try #require(listed["dead"]?.arrayValue?.first?.objectValue)
        #expect(letter["id"] == id && letter["reason"] == .string(TriggerLimits.parkedReason) && letter["lastError"] == "connection refused")
        let row = try Self.row(console, "?ns=env-b")
        #expect(row["pending"] == 0 && row["oldest"] == nil && row["dead"] == 1)

        // Resent: pending again, the same id.
        #expect(try console.call("POST", "triggers/resend?ns=env-b", body: #"{"ids": [\#(JSONWriter.string(id))]}"#).json == .object(["resent": 1]))
        #expect(try Self.row(console, "?ns=env-b")["oldest"]?.objectValue?["id"] == id)
        await server.stop()
    }
}
