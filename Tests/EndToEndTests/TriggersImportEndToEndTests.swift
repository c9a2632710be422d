import Foundation
import HearthTesting
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `hearth triggers import` on the manifest the real firebase-functions SDK serves for deploy,
/// then `hearth serve --triggers` with the file it printed: a write reaches the real function
/// under the Functions Framework.
@Suite struct TriggersImportEndToEndTests {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Python/manifest_functions.py").path

    /// Starts `python` with `arguments` in `directory`, output to `directory/<log>`; killed at deinit.
    final class Child {
        let process = ChildProcess()
        let log: String
        init(_ executable: String, _ arguments: [String], in directory: String, environment: [String: String], log: String) throws {
            self.log = directory + "/" + log
            FileManager.default.createFile(atPath: self.log, contents: nil)
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
            process.currentDirectoryURL = URL(fileURLWithPath: directory)
            process.standardOutput = FileHandle(forWritingAtPath: self.log)
            process.standardError = FileHandle(forWritingAtPath: self.log)
            try process.run()
        }
        deinit {
            if process.isRunning {
                process.signal(SIGKILL)
                process.waitUntilExit()
            }
        }
    }

    /// The manifest of the folder `work` (its main.py) from firebase-functions' admin server.
    static func manifest(python: String, folder: String) throws -> String {
        let adminPort = try freeLoopbackPort()
        let admin = try Child(python, ["-m", "firebase_functions.private.serving"], in: folder,
                              environment: ["ADMIN_PORT": String(adminPort)], log: "admin.log")
        let base = "http://127.0.0.1:\(adminPort)/__/"
        try CityStatsExampleEndToEndTests.waitUntilAnswering(base + "functions.yaml", log: admin.log)
        let served = try curl("GET", base + "functions.yaml")
        #expect(served.status == 200)
        _ = try? curl("GET", base + "quitquitquit")
        return served.body
    }

    @Test func theRealSDKsManifestBecomesTriggersThatDeliver() throws {
        let python = try pythonInterpreter()
        let dir = TemporaryDirectory(), folder = TemporaryDirectory()
        try FileManager.default.copyItem(atPath: Self.script, toPath: folder.path + "/main.py")
        let yaml = try Self.manifest(python: python, folder: folder.path)
        let manifestPath = folder.path + "/functions.yaml"
        try yaml.write(toFile: manifestPath, atomically: true, encoding: .utf8)

        // message_written runs under the Functions Framework; the others' URLs lead nowhere.
        let port = try freeLoopbackPort()
        let nowhereHeld = try RefusingPort()  // refusing to the end
        defer { nowhereHeld.release() }
        let nowhere = nowhereHeld.port
        let received = folder.path + "/received.jsonl"
        let framework = URL(fileURLWithPath: python).deletingLastPathComponent().appendingPathComponent("functions-framework").path
        let function = try Child(framework, ["--source", folder.path + "/main.py", "--target", "message_written", "--signature-type", "cloudevent",
                                             "--host", "127.0.0.1", "--port", String(port)],
                                 in: folder.path, environment: ["HEARTH_TRIGGER_OUT": received], log: "function.log")
        let urls = ["message_written": "http://127.0.0.1:\(port)/"].merging(
            ["member_joined", "profile_updated", "cart_deleted", "weather_check"].map { ($0, "http://127.0.0.1:\(nowhere)/\($0)") }) { a, _ in a }
        let arguments = urls.sorted { $0.key < $1.key }.flatMap { ["--url", "\($0.key)=\($0.value)"] }

        let imported = try runHearth(["triggers", "import", manifestPath] + arguments)
        #expect(imported.status == 0, "\(imported.error)")
        #expect(imported.output == """
            {"triggers": [
              {"name": "cart_deleted", "event": "deleted", "ref": "/carts/{uid}", "url": "http://127.0.0.1:\(nowhere)/cart_deleted", "retry": false},
              {"name": "member_joined", "event": "created", "ref": "/rooms/{room}/members/{uid}", "instance": "hearth", "url": "http://127.0.0.1:\(nowhere)/member_joined", "retry": false},
              {"name": "message_written", "event": "written", "ref": "/messages/{id}", "url": "http://127.0.0.1:\(port)/", "retry": false},
              {"name": "profile_updated", "event": "updated", "ref": "/profiles/{uid}", "url": "http://127.0.0.1:\(nowhere)/profile_updated", "retry": false, "timeoutSeconds": 30},
              {"name": "weather_check", "schedule": "every 5 minutes", "timeZone": "Europe/Oslo", "url": "http://127.0.0.1:\(nowhere)/weather_check", "retry": true}
            ]}

            """, "\(yaml)")
        #expect(imported.error == "skipped hello: an HTTPS function: clients call it directly, no trigger needed\n")

        // The same from standard input, written with --out; a function left without --url is named.
        let out = folder.path + "/triggers.json"
        let written = try runHearth(["triggers", "import", "-", "--out", out] + arguments, input: yaml)
        #expect(written.status == 0 && written.output.isEmpty, "\(written.error)")
        #expect(try String(contentsOfFile: out, encoding: .utf8) == imported.output)
        let missing = try runHearth(["triggers", "import", manifestPath] + arguments.dropLast(2))
        #expect(missing.status == 1 && missing.output.isEmpty)
        #expect(missing.error.contains("Error: Function \"weather_check\": no URL: give --url weather_check="), "\(missing.error)")
        let unknown = try runHearth(["triggers", "import", manifestPath, "--url", "nobody=http://127.0.0.1:1/"] + arguments)
        #expect(unknown.status == 1 && unknown.error.contains("--url nobody: the manifest has no function of that name"), "\(unknown.error)")

        // Serve the database triggers (schedules are served where the server knows them).
        let file = try #require(JSONSerialization.jsonObject(with: Data(imported.output.utf8)) as? [String: [[String: Any]]])
        let database = (file["triggers"] ?? []).filter { $0["schedule"] == nil }
        #expect(database.count == 4)
        let triggers = folder.path + "/database-triggers.json"
        try JSONSerialization.data(withJSONObject: ["triggers": database]).write(to: URL(fileURLWithPath: triggers))
        // retry is false (the SDK's database functions always say so): one attempt, so the function must be up.
        try CityStatsExampleEndToEndTests.waitUntilAnswering("http://127.0.0.1:\(port)/", log: function.log)
        let server = try HearthProcess.serve(dataDirectory: dir.path, environment: ["HEARTH_TRIGGERS": triggers])
        #expect(try curl("PUT", server.baseURL + "/messages/m1.json", body: #"{"text": "hello"}"#).status == 200)
        var lines: [String] = []
        try waitUntil("its record written") {
            lines = ((try? String(contentsOfFile: received, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
            return !lines.isEmpty
        }
        #expect(lines == [#"{"kind": "written", "params": {"id": "m1"}, "reference": "messages/m1", "value": {"text": "hello"}}"#],
                "\((try? String(contentsOfFile: function.log, encoding: .utf8)) ?? "")")
        server.signal(SIGTERM)
        #expect(try server.waitForExit() == 0)
    }

    /// What PyYAML writes for awkward strings (quoted, escaped, folded over lines) reads back as
    /// the same strings: the schedule and time zone come out of the import unchanged.
    @Test func pyYAMLsQuotingAndFoldingReadBackExactly() throws {
        let python = try pythonInterpreter()
        let work = TemporaryDirectory()
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Python/manifest_yaml_values.py").path
        #expect(try run(python, [script, work.path]).status == 0)
        let values = try #require(JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: work.path + "/values.json"))) as? [String])
        let urls = values.indices.flatMap { ["--url", "f\($0)=http://127.0.0.1:1/"] }
        let imported = try runHearth(["triggers", "import", work.path + "/functions.yaml"] + urls)
        #expect(imported.status == 0, "\(imported.error)")
        let file = try #require(JSONSerialization.jsonObject(with: Data(imported.output.utf8)) as? [String: [[String: Any]]])
        let triggers = file["triggers"] ?? []
        #expect(triggers.count == values.count)
        for trigger in triggers {
            let name = trigger["name"] as? String ?? "", index = Int(name.dropFirst()) ?? -1
            #expect(values.indices.contains(index))
            guard values.indices.contains(index) else { continue }
            #expect(trigger["schedule"] as? String == values[index], "\(name)")
            #expect(trigger["timeZone"] as? String == values[index], "\(name)")
        }
    }

    /// A manifest past 1 MiB is refused before it is read whole; YAML outside the subset is
    /// refused with its line; neither writes --out.
    @Test func anOversizedOrForeignManifestIsRefused() throws {
        let work = TemporaryDirectory()
        let big = work.path + "/big.yaml", out = work.path + "/triggers.json"
        try Data(repeating: UInt8(ascii: "\n"), count: (1 << 20) + 1).write(to: URL(fileURLWithPath: big))
        let oversized = try runHearth(["triggers", "import", big, "--out", out])
        #expect(oversized.status == 1 && oversized.error == "Error: \(big): larger than \(1 << 20) bytes\n", "\(oversized.error)")
        let anchors = work.path + "/anchors.yaml"
        try "endpoints:\n  a: &shared\n    entryPoint: a\n".write(toFile: anchors, atomically: true, encoding: .utf8)
        let foreign = try runHearth(["triggers", "import", anchors, "--out", out])
        #expect(foreign.status == 1 && foreign.error == "Error: \(anchors): line 2: anchors and aliases are outside the supported YAML\n", "\(foreign.error)")
        let missing = try runHearth(["triggers", "import", work.path + "/none.yaml"])
        #expect(missing.status == 1 && missing.error.contains("none.yaml: cannot be read"))
        #expect(!FileManager.default.fileExists(atPath: out))
    }
}
