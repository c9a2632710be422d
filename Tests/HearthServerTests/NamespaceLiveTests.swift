import Foundation
import Synchronization
import HearthJSON
@testable import HearthServer
import HearthTesting
import Testing

/// Several databases in one server. Two namespaces side by side (the default and
/// the others of a namespaces file, or created on first use in emulator mode)
/// keep their data, rules, streams and event ids apart; unknown names get 404. On
/// PostgreSQL too (scripts/test.sh runs HearthServerTests again with HEARTH_TEST_STORE).
@Suite(.serialized) struct NamespaceLiveTests {
    static let open = #"{"rules": {".read": true, ".write": true}}"#
    static let readOnly = #"{"rules": {".read": true, ".write": false}}"#
    static let owner = [("Authorization", "Bearer owner")]

    /// A server whose namespaces file lists `env-a` (open rules) and `env-b` (read-only),
    /// with `my-app` as the default's name.
    static func serverWithFile(defaultName: String = "my-app") throws -> LiveServer {
        try LiveServer(rules: open) { configuration in
            configuration.auth.acceptEmulatorOwner = true
            let folder = (configuration.rulesPath as NSString).deletingLastPathComponent
            try? writeFile(folder + "/a.json", open)
            try? writeFile(folder + "/b.json", readOnly)
            try? writeFile(folder + "/namespaces.json",
                           #"{"default": "\#(defaultName)", "namespaces": {"env-a": {"rules": "a.json"}, "env-b": {"rules": "b.json"}}}"#)
            configuration.namespacesFile = folder + "/namespaces.json"
        }
    }

    @Test func dataAndRulesAreKeptApart() async throws {
        let server = try Self.serverWithFile()
        #expect(try server.request("PUT", "/x.json", #""default""#).status == 200)
        #expect(try server.request("PUT", "/x.json?ns=env-a", #""a""#).status == 200)
        // env-b's rules refuse every write; the others' do not.
        let refused = try server.request("PUT", "/x.json?ns=env-b", #""b""#)
        #expect(refused.status == 401 && refused.body.contains("Permission denied"), "\(refused)")
        #expect(try server.request("GET", "/x.json").body == #""default""#)
        #expect(try server.request("GET", "/x.json?ns=my-app").body == #""default""#)
        #expect(try server.request("GET", "/x.json?ns=env-a").body == #""a""#)
        #expect(try server.request("GET", "/x.json?ns=env-b").body == "null")
        // Each namespace's rules are its own through /.settings/rules.json too.
        let rulesB = try server.request("GET", "/.settings/rules.json?ns=env-b&format=strict", headers: Self.owner)
        #expect(rulesB.status == 200 && rulesB.body.contains("false"), "\(rulesB)")
        await server.stop()
    }

    @Test func anUnknownNamespaceIsNotFound() async throws {
        let server = try Self.serverWithFile()
        for target in ["/x.json?ns=elsewhere", "/.settings/rules.json?ns=elsewhere", "/x.json?ns=Not_Valid"] {
            let answer = try server.request("GET", target)
            #expect(answer.status == 404, "\(target): \(answer)")
            let body = try JSONParser.parse(Array(answer.body.utf8))
            #expect(body.objectValue?["error"]?.stringValue?.contains("is not served here") == true, "\(answer.body)")
        }
        // A PUT to an unknown namespace writes nowhere.
        #expect(try server.request("PUT", "/y.json?ns=elsewhere", "1").status == 404)
        #expect(try server.request("GET", "/y.json").body == "null")
        await server.stop()
    }

    /// `/metrics` labels each namespace's store size and open streams with its name.
    @Test func metricsAreLabelledByNamespace() async throws {
        let server = try Self.serverWithFile()
        let stream = try server.stream("/x.json?ns=env-a")
        #expect(try stream.nextEvent().name == "put")
        let text = try server.request("GET", "/metrics").body
        #expect(text.contains("hearth_namespaces 2"), "\(text)")
        for name in ["(default)", "env-a", "env-b"] {
            #expect(text.contains(#"hearth_database_bytes{namespace="\#(name)"}"#), "\(name)")
        }
        #expect(text.contains(#"hearth_open_streams{namespace="env-a"} 1"#), "\(text)")
        #expect(text.contains(#"hearth_open_streams{namespace="env-b"} 0"#), "\(text)")
        stream.close()
        await server.stop()
    }

    /// On `/.ws` a name the file does not list gets the protocol's shutdown, the
    /// default's name the handshake (wire_client.py's `namespace` mode).
    @Test func anUnknownNamespaceGetsTheWireShutdown() async throws {
        let server = try Self.serverWithFile(defaultName: "demo")
        let result = try WireLiveTests.client("namespace", port: server.port)
        await server.stop()
        #expect(result.status == 0 && result.output.hasSuffix("done\n"), "\(result.output)")
        #expect(result.output.contains("ok an unknown namespace gets shutdown"))
    }

    /// The same over long polling (`/.lp`, lp_client.py's `namespace` mode): a session
    /// opened with `ns` reads and writes that namespace; an unlisted name gets the shutdown.
    @Test func aLongPollSessionUsesItsNamespace() async throws {
        let server = try Self.serverWithFile(defaultName: "demo")
        let result = try WireLiveTests.client("namespace", port: server.port, script: "lp_client.py")
        await server.stop()
        #expect(result.status == 0 && result.output.hasSuffix("done\n"), "\(result.output)")
    }

    /// `<ns>.<domain>` as the SDKs derive it: a host's first label that names a namespace
    /// picks it; one that names none is just a host name (the default namespace).
    @Test func theHostsFirstLabelPicksANamespace() async throws {
        let server = try Self.serverWithFile()
        #expect(try server.request("PUT", "/x.json?ns=env-a", #""a""#).status == 200)
        #expect(try server.request("PUT", "/x.json", #""default""#).status == 200)
        #expect(try Self.get(port: server.port, "/x.json", host: "env-a.db.example.com") == #""a""#)
        #expect(try Self.get(port: server.port, "/x.json", host: "www.db.example.com") == #""default""#)
        #expect(try Self.get(port: server.port, "/x.json", host: "127.0.0.1:\(server.port)") == #""default""#)
        await server.stop()
    }

    /// Streams and their event ids: a stream of one namespace never sees another's writes,
    /// and each namespace numbers its own changes.
    @Test func streamsAndEventIDsAreKeptApart() async throws {
        let server = try Self.serverWithFile()
        let streamA = try server.stream("/x.json?ns=env-a")
        let streamDefault = try server.stream("/x.json")
        #expect(try streamA.nextEvent().data.contains(#""data":null"#))
        #expect(try streamDefault.nextEvent().data.contains(#""data":null"#))
        for value in 1...3 { #expect(try server.request("PUT", "/x.json", "\(value)").status == 200) }
        #expect(try server.request("PUT", "/x.json?ns=env-a", #""a""#).status == 200)
        var last = try streamDefault.nextEvent()
        while !last.data.contains(#""data":3"#) { last = try streamDefault.nextEvent() }
        let eventA = try streamA.nextEvent()
        #expect(eventA.data.contains(#""data":"a""#), "\(eventA)")  // the first it gets is its own write
        let (idA, idDefault) = (try #require(eventA.id), try #require(last.id))
        #expect(idDefault - idA >= 2, "env-a numbers its own changes: \(idA) vs the default's \(idDefault)")
        streamA.close()
        streamDefault.close()
        await server.stop()
    }

    /// The rules file of `emulator()`: anyone reads; only `/open` takes writes.
    static let serverRules = #"{"rules": {".read": true, "open": {".write": true}}}"#

    /// An emulator-mode server (`--accept-emulator-owner`) without a namespaces file.
    static func emulator() throws -> LiveServer {
        try LiveServer(rules: serverRules) { $0.auth.acceptEmulatorOwner = true }
    }

    /// In emulator mode the first request naming a namespace creates it, without any rules
    /// replacement: a write on `alpha` is seen neither on the default nor on `beta`, and the
    /// new namespace runs the server's rules file until its rules are replaced (which go to
    /// its own file, not the server's).
    @Test func firstUseCreatesANamespaceWithTheServersRules() async throws {
        let server = try Self.emulator()
        #expect(try server.request("PUT", "/open/x.json?ns=alpha", #""a""#).status == 200)
        #expect(try server.request("GET", "/open/x.json?ns=alpha").body == #""a""#)
        #expect(try server.request("GET", "/open/x.json").body == "null")
        #expect(try server.request("GET", "/open/x.json?ns=beta").body == "null")
        // The server's rules file: a write it denies is denied in alpha for a non-owner.
        let denied = try server.request("PUT", "/closed.json?ns=alpha", "1")
        #expect(denied.status == 401 && denied.body.contains("Permission denied"), "\(denied)")
        let rules = try server.request("GET", "/.settings/rules.json?ns=alpha", headers: Self.owner)
        #expect(rules.status == 200 && rules.body == Self.serverRules, "\(rules)")
        // Replaced: alpha's rules change, the default's (the server's file) do not.
        let open = #"{"rules": {".read": true, ".write": true}}"#
        #expect(try server.request("PUT", "/.settings/rules.json?ns=alpha", open, headers: Self.owner).status == 200)
        #expect(try server.request("PUT", "/closed.json?ns=alpha", "1").status == 200)
        #expect(try server.request("GET", "/.settings/rules.json?ns=alpha", headers: Self.owner).body == open)
        #expect(try server.request("GET", "/.settings/rules.json", headers: Self.owner).body == Self.serverRules)
        #expect(try server.request("PUT", "/closed.json?ns=beta", "1").status == 401)
        #expect(try server.request("PUT", "/closed.json", "1").status == 401)
        await server.stop()
    }

    /// An SSE stream is a first use too: a stream on `alpha` gets alpha's events, never beta's.
    @Test func aStreamOnANewNamespaceGetsOnlyItsEvents() async throws {
        let server = try Self.emulator()
        let stream = try server.stream("/open.json?ns=alpha")
        #expect(try stream.nextEvent().data.contains(#""data":null"#))
        #expect(try server.request("PUT", "/open/x.json?ns=beta", #""b""#).status == 200)
        #expect(try server.request("PUT", "/open/x.json", #""default""#).status == 200)
        #expect(try server.request("PUT", "/open/x.json?ns=alpha", #""a""#).status == 200)
        let event = try stream.nextEvent()
        #expect(event.name == "put" && event.data.contains(#""data":"a""#), "the first event is alpha's own write: \(event)")
        stream.close()
        await server.stop()
    }

    /// A name that cannot be created: invalid (400), one past `NamespaceRegistry.maxNamespaces`
    /// (403); each with `{"error"}`, and the ones there keep working. On SQLite only (on
    /// PostgreSQL each namespace holds its own connections).
    @Test(.enabled(if: ProcessInfo.processInfo.environment["HEARTH_TEST_STORE"] != "postgres"))
    func firstUseCreationIsBounded() async throws {
        let server = try Self.emulator()
        for target in ["/x.json?ns=Upper", "/x.json?ns=under_score", "/x.json?ns=-leading",
                       "/x.json?ns=" + String(repeating: "a", count: NamespaceName.maxBytes + 1)] {
            let answer = try server.request("GET", target)
            #expect(answer.status == 400, "\(target): \(answer)")
            #expect(try JSONParser.parse(Array(answer.body.utf8)).objectValue?["error"]?.stringValue != nil, "\(answer.body)")
        }
        for index in 0..<NamespaceRegistry.maxNamespaces {
            #expect(try server.request("GET", "/x.json?ns=n-\(index)").status == 200)
        }
        for (method, target) in [("GET", "/x.json?ns=n-last"), ("PUT", "/open/x.json?ns=n-last")] {
            let refused = try server.request(method, target, method == "PUT" ? "1" : nil)
            #expect(refused.status == 403, "\(method) \(target): \(refused)")
            #expect(try JSONParser.parse(Array(refused.body.utf8)).objectValue?["error"]?.stringValue != nil, "\(refused.body)")
        }
        // Nothing reached the default, and a namespace already there still answers.
        #expect(try server.request("GET", "/open/x.json").body == "null")
        #expect(try server.request("PUT", "/open/x.json?ns=n-0", "1").status == 200)
        #expect(try server.request("GET", "/open/x.json?ns=n-0").body == "1")
        await server.stop()
    }

    /// Over the wire protocol (`/.ws`, wire_client.py's `emulator_namespaces` mode): two
    /// clients on `ns=alpha` and `ns=beta`, no rules replacement, never see each other's writes.
    @Test func wireClientsOnTwoNewNamespacesAreKeptApart() async throws {
        let server = try Self.emulator()
        let result = try WireLiveTests.client("emulator_namespaces", port: server.port)
        await server.stop()
        #expect(result.status == 0 && result.output.hasSuffix("done\n"), "\(result.output)")
        #expect(result.output.contains("ok no push of beta's write in alpha"), "\(result.output)")
    }

    /// A store that cannot be opened (its directory's place taken by a file): 503 with
    /// `{"error"}`, nothing written anywhere, and the name may be tried again. SQLite only.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["HEARTH_TEST_STORE"] != "postgres"))
    func aNamespaceThatCannotOpenIsUnavailable() async throws {
        let server = try Self.emulator()
        let blocker = server.directory.path + "/data/namespaces/broken"
        try FileManager.default.createDirectory(atPath: server.directory.path + "/data/namespaces", withIntermediateDirectories: true)
        try writeFile(blocker, "not a directory")
        let answer = try server.request("PUT", "/open/x.json?ns=broken", "1")
        #expect(answer.status == 503, "\(answer)")
        #expect(try JSONParser.parse(Array(answer.body.utf8)).objectValue?["error"]?.stringValue != nil, "\(answer.body)")
        #expect(try server.request("GET", "/open/x.json").body == "null")
        try FileManager.default.removeItem(atPath: blocker)
        #expect(try server.request("PUT", "/open/x.json?ns=broken", "1").status == 200)
        await server.stop()
    }

    /// The number of databases `/metrics` counts besides the default (`hearth_namespaces`).
    static func namespaceCount(_ server: LiveServer) throws -> Double? {
        try server.request("GET", "/metrics").body.split(separator: "\n")
            .first { $0.hasPrefix("hearth_namespaces ") }.flatMap { Double($0.split(separator: " ")[1]) }
    }

    /// The default namespace's names never create one: `HEARTH_NAMESPACES`'s, the project id
    /// and `<project id>-default-rtdb` (what firebase-admin and functions name in emulator
    /// mode), over REST, a rules replacement and `/.ws`; a name merely like them does create.
    @Test func theDefaultsNamesNeverCreateANamespace() async throws {
        let server = try LiveServer(rules: Self.serverRules) { configuration in
            configuration.auth.acceptEmulatorOwner = true
            configuration.auth.projectID = "demo-proj"
            configuration.namespaces = ["demo"]
        }
        for name in ["demo", "demo-proj", "demo-proj-default-rtdb"] {
            #expect(try server.request("PUT", "/open/rest-\(name).json?ns=\(name)", #""\#(name)""#).status == 200)
        }
        let replaced = #"{"rules": {".read": true, ".write": false, "open": {".write": true}, "more": {".write": true}}}"#
        #expect(try server.request("PUT", "/.settings/rules.json?ns=demo-proj-default-rtdb", replaced, headers: Self.owner).status == 200)
        #expect(try server.request("GET", "/.settings/rules.json", headers: Self.owner).body == replaced)
        let wire = try WireLiveTests.client("emulator_default_names", port: server.port)
        #expect(wire.status == 0 && wire.output.hasSuffix("done\n"), "\(wire.output)")
        #expect(try Self.namespaceCount(server) == 0)
        let tree = try JSONParser.parse(Array(try server.request("GET", "/open.json").body.utf8))
        #expect(tree.objectValue?.keys.map(\.string).sorted() == ["demo", "demo-proj", "demo-proj-default-rtdb",
                                                    "rest-demo", "rest-demo-proj", "rest-demo-proj-default-rtdb"], "\(tree)")
        // Another project's database name is a namespace of its own.
        #expect(try server.request("PUT", "/open/x.json?ns=hearth-default-rtdb", "1").status == 200)
        #expect(try server.request("GET", "/open/x.json").body == "null")
        #expect(try Self.namespaceCount(server) == 1)
        await server.stop()
    }

    /// With the default project id (`hearth`), `hearth` and `hearth-default-rtdb` are the
    /// default's (the functions example's `databaseURL` names `?ns=hearth`).
    @Test func theDefaultProjectIDsNamesAreTheDefaults() async throws {
        let server = try Self.emulator()
        #expect(try server.request("PUT", "/open/x.json?ns=hearth", #""p""#).status == 200)
        #expect(try server.request("GET", "/open/x.json?ns=hearth-default-rtdb").body == #""p""#)
        #expect(try server.request("GET", "/open/x.json").body == #""p""#)
        #expect(try Self.namespaceCount(server) == 0)
        await server.stop()
    }

    /// A namespace made by a read runs the server's rules file: a user writes only where it
    /// lets them (the owner, an admin, anywhere).
    @Test func aNamespaceMadeByAReadIsWritableOnlyAsItsRulesAllow() async throws {
        let server = try Self.emulator()
        #expect(try server.request("GET", "/closed.json?ns=read-made").body == "null")
        #expect(try Self.namespaceCount(server) == 1)
        let (_, token) = try server.anonymousUser()
        for credential in [[], [("Authorization", "Bearer " + token)]] {
            let refused = try server.request("PUT", "/closed.json?ns=read-made", "1", headers: credential)
            #expect(refused.status == 401 && refused.body.contains("Permission denied"), "\(refused)")
        }
        #expect(try server.request("PUT", "/open/x.json?ns=read-made", "1").status == 200)
        #expect(try server.request("PUT", "/closed.json?ns=read-made", "2", headers: Self.owner).status == 200)
        #expect(try server.request("GET", "/closed.json?ns=read-made").body == "2")
        #expect(try server.request("GET", "/closed.json").body == "null")
        await server.stop()
    }

    /// Many first requests for one name at once open it once: every write lands in the same
    /// database, which `/metrics` counts once.
    @Test func concurrentFirstRequestsOpenANamespaceOnce() async throws {
        let server = try Self.emulator()
        let writers = 16
        let statuses = Mutex([Int](repeating: 0, count: writers))
        DispatchQueue.concurrentPerform(iterations: writers) { index in
            let status = (try? server.request("PUT", "/open/w\(index).json?ns=raced", "\(index)").status) ?? -1
            statuses.withLock { $0[index] = status }
        }
        #expect(statuses.withLock { $0 } == [Int](repeating: 200, count: writers))
        let tree = try JSONParser.parse(Array(try server.request("GET", "/open.json?ns=raced").body.utf8))
        #expect(tree.objectValue?.count == writers, "\(tree)")
        #expect(try Self.namespaceCount(server) == 1)
        await server.stop()
    }

    /// A client naming many more names than the cap: past `NamespaceRegistry.maxNamespaces`
    /// each is refused (403) without opening anything (no store directory is made), and
    /// the default and the namespaces already there keep answering. SQLite only.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["HEARTH_TEST_STORE"] != "postgres"))
    func aClientNamingThousandsOfNamesIsStoppedAtTheCap() async throws {
        let server = try Self.emulator()
        let names = 10_000
        var refused = 0
        for index in 0..<names where try server.request("GET", "/x.json?ns=flood-\(index)").status == 403 { refused += 1 }
        #expect(refused == names - NamespaceRegistry.maxNamespaces)
        let made = try FileManager.default.contentsOfDirectory(atPath: server.directory.path + "/data/namespaces")
        #expect(made.filter { $0.hasPrefix("flood-") }.count == NamespaceRegistry.maxNamespaces, "\(made.count)")
        #expect(try Self.namespaceCount(server) == Double(NamespaceRegistry.maxNamespaces))
        #expect(try server.request("PUT", "/open/x.json", "0").status == 200)
        #expect(try server.request("PUT", "/open/x.json?ns=flood-0", "1").status == 200)
        #expect(try server.request("GET", "/open/x.json?ns=flood-0").body == "1")
        #expect(try server.request("GET", "/open/x.json").body == "0")
        await server.stop()
    }

    /// A host's first label is just a host name: it creates nothing, even in emulator mode.
    @Test func aHostLabelCreatesNoNamespace() async throws {
        let server = try Self.emulator()
        #expect(try liveRequest(port: server.port, "PUT", "/open/x.json", body: #""h""#, host: "gamma.db.example.com").status == 200)
        #expect(try server.request("GET", "/open/x.json").body == #""h""#)
        #expect(try server.request("GET", "/open/x.json?ns=gamma").body == "null")
        await server.stop()
    }

    /// Outside emulator mode nothing is created: without a namespaces file every name is the default's.
    @Test func outsideEmulatorModeANameIsTheDefaults() async throws {
        let server = try LiveServer(rules: Self.serverRules)
        #expect(try server.request("PUT", "/open/x.json?ns=alpha", #""a""#).status == 200)
        #expect(try server.request("GET", "/open/x.json").body == #""a""#)
        #expect(try server.request("GET", "/open/x.json?ns=beta").body == #""a""#)
        await server.stop()
    }

    /// GET `target` with its own `Host` header; the body.
    static func get(port: Int, _ target: String, host: String) throws -> String {
        try liveRequest(port: port, "GET", target, host: host).body
    }
}
