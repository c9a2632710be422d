import Foundation
import HearthJSON
import HearthTesting
import Testing
@testable import HearthServer

/// What an operator sees of a namespace besides the default: `/readyz` asks every open
/// database and names the one that is not ready; a `SIGHUP` (`reloadRules`,
/// `reloadTriggers`) reloads every namespace's rules file and triggers.
@Suite(.serialized) struct NamespaceOperationsLiveTests {
    static let open = #"{"rules": {".read": true, ".write": true}}"#
    static let readOnly = #"{"rules": {".read": true, ".write": false}}"#

    static func trigger(_ names: [String]) -> String {
        let entries = names.map { #"{"name": "\#($0)", "event": "written", "ref": "/\#($0)", "url": "http://127.0.0.1:1/"}"# }
        return "{\"triggers\": [" + entries.joined(separator: ",") + "]}"
    }

    /// `env-a` (open rules) and `env-b` (read-only) beside the default, with a triggers file
    /// holding `first`; the folder of the files.
    static func server() throws -> (LiveServer, String) {
        let server = try LiveServer(rules: open) { configuration in
            let directory = (configuration.rulesPath as NSString).deletingLastPathComponent
            try? writeFile(directory + "/a.json", open)
            try? writeFile(directory + "/b.json", readOnly)
            try? writeFile(directory + "/triggers.json", trigger(["first"]))
            try? writeFile(directory + "/namespaces.json",
                           #"{"namespaces": {"env-a": {"rules": "a.json"}, "env-b": {"rules": "b.json"}}}"#)
            configuration.namespacesFile = directory + "/namespaces.json"
            configuration.triggersPath = directory + "/triggers.json"
        }
        return (server, (server.rulesPath as NSString).deletingLastPathComponent)
    }

    static func namespace(_ name: String, of server: LiveServer) throws -> Namespace {
        try #require(server.service.namespaces.extras.first { $0.name == name })
    }

    @Test func readyzAsksEveryNamespaceAndNamesTheOneNotReady() async throws {
        let (server, _) = try Self.server()
        #expect(try server.request("GET", "/readyz").status == 200)
        // env-b's store stops taking writes (closed, as at shutdown); the others still do.
        try Self.namespace("env-b", of: server).instance.store.close()
        let answer = try server.request("GET", "/readyz")
        #expect(answer.status == 503, "\(answer)")
        let body = try JSONParser.parse(Array(answer.body.utf8)).objectValue
        #expect(body?["namespace"]?.stringValue == "env-b", "\(answer.body)")
        #expect(body?["error"]?.stringValue?.contains("the data store is closed") == true, "\(answer.body)")
        #expect(try server.request("PUT", "/x.json?ns=env-a", "1").status == 200)
        #expect(try server.request("PUT", "/x.json", "1").status == 200)
        await server.stop()
    }

    /// The default namespace not ready is reported without a `namespace`, as before.
    @Test func readyzOfTheDefaultNamesNoNamespace() async throws {
        let (server, _) = try Self.server()
        server.service.namespaces.primary.instance.store.close()
        let answer = try server.request("GET", "/readyz")
        #expect(answer.status == 503, "\(answer)")
        #expect(try JSONParser.parse(Array(answer.body.utf8)).objectValue?["namespace"] == nil, "\(answer.body)")
        await server.stop()
    }

    @Test func reloadRulesReloadsASecondNamespacesFile() async throws {
        let (server, folder) = try Self.server()
        #expect(try server.request("PUT", "/x.json?ns=env-b", "1").status == 401)
        try writeFile(folder + "/b.json", Self.open)
        // env-a's file becomes invalid: it keeps its rules, the others still reload.
        try writeFile(folder + "/a.json", #"{"rules": {".read": "nonsense("}}"#)
        #expect(server.service.reloadRules() == false)
        #expect(try server.request("PUT", "/x.json?ns=env-b", "1").status == 200)
        #expect(try server.request("PUT", "/x.json?ns=env-a", "1").status == 200)
        let versions = try Self.namespace("env-b", of: server).instance.history.versions()
        #expect(versions.map(\.savedBy) == ["rules file (reloaded on SIGHUP)", "rules file (read at startup)"])
        #expect(versions.first?.text == Self.open)
        try writeFile(folder + "/a.json", Self.readOnly)
        #expect(server.service.reloadRules())
        #expect(try server.request("PUT", "/x.json?ns=env-a", "2").status == 401)
        await server.stop()
    }

    @Test func reloadTriggersReloadsEveryNamespacesTriggers() async throws {
        let (server, folder) = try Self.server()
        let envA = try Self.namespace("env-a", of: server)
        #expect(envA.triggers?.triggerNames == ["first"])
        try writeFile(folder + "/triggers.json", Self.trigger(["first", "second"]))
        #expect(server.service.reloadTriggers())
        for namespace in server.service.namespaces.all {
            #expect(namespace.triggers?.triggerNames == ["first", "second"], "\(namespace.shownName)")
        }
        // The triggers observe their own namespace's commits (one observer each, no late binding).
        #expect(envA.instance.commitObserverCount == 1)
        await server.stop()
    }
}
