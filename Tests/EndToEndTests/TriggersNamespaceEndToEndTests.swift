import Foundation
import Testing

/// `hearth triggers list|dead|resend --ns <name>` against a running `hearth serve` with a
/// namespaces file, on the test store (SQLite, or PostgreSQL with HEARTH_TEST_STORE=postgres):
/// each namespace's outbox is its own, and a namespace that does not exist is refused
/// without being created.
@Suite struct TriggersNamespaceEndToEndTests {
    static let namespace = "shop-eu"

    /// `flaky` fires only in `shop-eu` and makes one attempt.
    static func files(port: Int, in directory: String) throws -> (triggers: String, namespaces: String) {
        let triggers = directory + "/triggers.json"
        try """
        {"triggers": [
          {"name": "flaky", "event": "written", "ref": "/items/{id}", "url": "http://127.0.0.1:\(port)/flaky", "retry": false,
           "instance": "\(namespace)"}
        ]}
        """.write(toFile: triggers, atomically: true, encoding: .utf8)
        return (triggers, try namespacesFile(in: directory))
    }

    /// A namespaces file in `directory` declaring `shop-eu` (open rules); its path.
    static func namespacesFile(in directory: String) throws -> String {
        try HearthProcess.openRules.write(toFile: directory + "/eu.rules.json", atomically: true, encoding: .utf8)
        let namespaces = directory + "/namespaces.json"
        try #"{"namespaces": {"\#(namespace)": {"rules": "eu.rules.json"}}}"#.write(toFile: namespaces, atomically: true, encoding: .utf8)
        return namespaces
    }

    @Test func deadLettersOfASecondNamespace() throws {
        let directory = TemporaryDirectory(), work = TemporaryDirectory()
        let receiver = try TriggerReceiver(answers: [500])
        defer { receiver.stop() }
        let (triggers, namespaces) = try Self.files(port: receiver.port, in: work.path)
        let server = try HearthProcess.serve(dataDirectory: directory.path,
                                             environment: ["HEARTH_TRIGGERS": triggers, "HEARTH_NAMESPACES_FILE": namespaces])
        let store = try TriggersOperatorEndToEndTests.storeArguments(directory.path)
        let eu = store + ["--ns", Self.namespace]
        let lines = TriggersOperatorEndToEndTests.lines

        #expect(try liveRequest(port: server.port, "PUT", "/items/a.json?ns=\(Self.namespace)", body: "1").status == 200)
        #expect(try liveRequest(port: server.port, "PUT", "/items/b.json", body: "1").status == 200)  // no trigger here
        var dead: [[String]] = []
        try waitUntil("the dead letter in \(Self.namespace)") {
            let result = try runHearth(["triggers", "dead"] + eu)
            dead = lines(result.output)
            return result.status == 0 && dead.count == 1
        }
        #expect(dead[0][1] == "flaky" && dead[0][2] == "/items/a" && dead[0][3].contains("HTTP 500"), "\(dead)")
        // The default namespace's outbox has none.
        let defaultDead = try runHearth(["triggers", "dead"] + store)
        #expect(defaultDead.status == 0 && defaultDead.output.isEmpty, "\(defaultDead)")

        // list --ns: the namespace's counts; without --ns, the default's (nothing dead there).
        let list = try runHearth(["triggers", "list", "--triggers", triggers] + eu)
        #expect(list.status == 0, "\(list.error)")
        #expect(lines(list.output).map { Array($0.prefix(7)) }
                == [["flaky", "written", "/items/{id}", "http://127.0.0.1:\(receiver.port)/flaky", "0", "-", "1"]], "\(list.output)")
        let defaultList = try runHearth(["triggers", "list", "--triggers", triggers] + store)
        #expect(defaultList.status == 0 && lines(defaultList.output).map { $0.count > 6 ? $0[6] : "" } == ["0"], "\(defaultList.output)")

        // resend --ns: the running server delivers it again from that namespace.
        let wrongPlace = try runHearth(["triggers", "resend", dead[0][0]] + store)
        #expect(wrongPlace.status == 1 && wrongPlace.output == "resent 0 dead letter(s)\n", "\(wrongPlace)")
        let resent = try runHearth(["triggers", "resend", dead[0][0]] + eu)
        #expect(resent.status == 0 && resent.output == "resent 1 dead letter(s)\n", "\(resent)")
        try waitUntil("the resent event's delivery") { receiver.refs.filter { $0 == "items/a" }.count == 2 }
        #expect(receiver.received.allSatisfy { $0.header("ce-instance") == Self.namespace })
        #expect(try runHearth(["triggers", "dead"] + eu).output.isEmpty)
        try waitUntil("an empty backlog") {
            lines(try runHearth(["triggers", "list"] + eu).output).allSatisfy { $0.count > 6 && $0[4] == "0" && $0[6] == "0" }
        }
        server.signal(SIGTERM)
        #expect(try server.waitForExit() == 0)
    }

    /// A bad name is a usage error; a namespace the server never opened is refused by every
    /// subcommand, and none is created (no database file, no schema: asking again still finds none).
    @Test func badAndUnknownNamespacesAreRefused() throws {
        let directory = TemporaryDirectory(), work = TemporaryDirectory()
        let refusing = try RefusingPort()  // refusing to the end
        defer { refusing.release() }
        let (triggers, namespaces) = try Self.files(port: refusing.port, in: work.path)
        let server = try HearthProcess.serve(dataDirectory: directory.path,
                                             environment: ["HEARTH_TRIGGERS": triggers, "HEARTH_NAMESPACES_FILE": namespaces])
        let store = try TriggersOperatorEndToEndTests.storeArguments(directory.path)
        for command in [["triggers", "list"], ["triggers", "dead"], ["triggers", "resend", "--all"], ["triggers", "resend", "1"]] {
            let bad = try runHearth(command + store + ["--ns", "Shop_EU"])
            #expect(bad.status == 64 && bad.error.contains("Error: --ns: "), "\(command) \(bad)")
            for _ in 0..<2 {
                let unknown = try runHearth(command + store + ["--ns", "nowhere"])
                #expect(unknown.status == 1 && unknown.output.isEmpty, "\(command) \(unknown)")
                #expect(unknown.error.contains("Error: No namespace nowhere in ") && unknown.error.contains("check --ns"), "\(unknown.error)")
            }
        }
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/namespaces/nowhere"))
        #expect(try runHearth(["triggers", "dead", "--help"]).output.contains("--ns"))
        server.signal(SIGTERM)
        #expect(try server.waitForExit() == 0)
    }
}
