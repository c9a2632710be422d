import Foundation
import HearthJSON
import HearthServer
import HearthTesting
import Testing

/// Issue 28: several databases in one server. Two namespaces side by side (the default and
/// the others of a namespaces file, or created by a rules replacement in emulator mode)
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

    /// GET `target` with its own `Host` header; the body.
    static func get(port: Int, _ target: String, host: String) throws -> String {
        try liveRequest(port: port, "GET", target, host: host).body
    }
}
