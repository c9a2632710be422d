import Foundation
import HearthTesting
import Testing

/// Hearth as the Realtime Database emulator for `@firebase/rules-unit-testing`
/// against the built binary with `--accept-emulator-owner`:
/// two test environments side by side, each its own namespace, driven over the wire
/// protocol and REST as the library drives them (`Python/rules_unit_testing.py`).
@Suite struct EmulatorEndToEndTests {
    let dir = TemporaryDirectory()

    @Test func twoTestEnvironmentsSideBySide() throws {
        let python = try pythonInterpreter()
        var environment: [String: String] = [:]
        if let url = try TestStore.postgresURL(for: dir.path) { environment["HEARTH_STORE"] = url }
        let server = try HearthProcess(
            arguments: ["serve", "--port", "0", "--data-dir", dir.path, "--accept-emulator-owner",
                        "--rules", try HearthProcess.writeRules(#"{"rules": {".read": false, ".write": false}}"#, in: dir.path)],
            dataDirectory: dir.path, environment: environment)
        try server.waitUntilListening()
        let result = try runPythonDriver(python, script: "rules_unit_testing.py", arguments: ["side_by_side", String(server.port)],
                                         environment: [:])
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)\n\(server.log.suffix(3000))")
        for check in ["bad rules answered 400 with an error", "env two's rules refuse it", "no push of env two's writes in env one",
                      "env one is empty at once", "env two is untouched", "a mock token through a proxy is refused", "it ran in env two only", "the admin claim lets it", "the mock token on REST (?auth=)"] {
            #expect(result.stdout.contains("ok \(check)\n"), "'\(check)' did not pass\n\(result.stdout)")
        }
        #expect(result.stdout.hasSuffix("done\n"))
        server.signal(SIGTERM)
        #expect(try server.waitForExit() == 0)

        // Exports are kept apart too (`hearth export --ns`), and an import goes to its namespace only.
        var store = ["--data-dir", dir.path]
        if let url = environment["HEARTH_STORE"] { store += ["--store", url] }
        let two = try runHearth(["export", "--ns", "demo-env-two"] + store)
        #expect(two.status == 0 && two.output.contains(#"{"presence":"gone","users":{"alice":{"n":22}}}"#), "\(two)")
        #expect(try runHearth(["export", "--ns", "demo-env-one"] + store).output.trimmingCharacters(in: .whitespacesAndNewlines) == "null")
        #expect(try runHearth(["export"] + store).output.trimmingCharacters(in: .whitespacesAndNewlines) == "null")
        let imported = try runHearth(["import", "-", "--ns", "demo-env-one", "--path", "/seed"] + store, input: #"{"k":1}"#)
        #expect(imported.status == 0, "\(imported)")
        #expect(try runHearth(["export", "--ns", "demo-env-one"] + store).output.contains(#"{"seed":{"k":1}}"#))
        #expect(try runHearth(["export", "--ns", "demo-env-two", "--path", "/seed"] + store).output.contains("null"))
        // A namespace's backup restores into another namespace (one not there yet).
        let backup = dir.path + "/backup-two"
        let backedUp = try runHearth(["backup", backup, "--ns", "demo-env-two"] + store)
        #expect(backedUp.status == 0, "\(backedUp)")
        let restored = try runHearth(["restore", backup, "--ns", "demo-env-three"] + store)
        #expect(restored.status == 0, "\(restored)")
        #expect(try runHearth(["export", "--ns", "demo-env-three"] + store).output.contains(#"{"presence":"gone","users":{"alice":{"n":22}}}"#))
        // `hearth copy --ns`: one namespace's database into another store.
        let copied = dir.path + "/copied"
        let from = environment["HEARTH_STORE"] ?? "sqlite:" + dir.path
        let copy = try runHearth(["copy", "--from", from, "--to", "sqlite:" + copied, "--ns", "demo-env-two"])
        #expect(copy.status == 0, "\(copy)")
        #expect(try runHearth(["export", "--ns", "demo-env-two", "--data-dir", copied]).output.contains(#""users":{"alice":{"n":22}}"#))
        let bad = try runHearth(["export", "--ns", "Bad_Name"] + store)
        #expect(bad.status != 0 && bad.error.contains("--ns"), "\(bad)")
    }

    /// A namespace made by the emulator mode keeps its replaced rules across a restart:
    /// `gamma`'s replacement is read again when the restarted server first hears of it,
    /// while `delta`, never replaced, runs the server's rules file again. Its data stays too.
    @Test func replacedRulesSurviveARestart() throws {
        var environment: [String: String] = [:]
        if let url = try TestStore.postgresURL(for: dir.path) { environment["HEARTH_STORE"] = url }
        let serverRules = #"{"rules": {".read": true, ".write": false}}"#
        let rulesPath = try HearthProcess.writeRules(serverRules, in: dir.path)
        func spawn() throws -> HearthProcess {
            let server = try HearthProcess(
                arguments: ["serve", "--port", "0", "--data-dir", dir.path, "--accept-emulator-owner", "--rules", rulesPath],
                dataDirectory: dir.path, environment: environment)
            try server.waitUntilListening()
            return server
        }
        let owner = [("Authorization", "Bearer owner")]
        let replaced = #"{"rules": {".read": true, "open": {".write": true}}}"#
        let first = try spawn()
        #expect(try liveRequest(port: first.port, "PUT", "/.settings/rules.json?ns=gamma", body: replaced, headers: owner).status == 200)
        #expect(try liveRequest(port: first.port, "PUT", "/open/x.json?ns=gamma", body: #""g""#).status == 200)
        #expect(try liveRequest(port: first.port, "PUT", "/open/x.json?ns=delta", body: #""d""#).status == 401)
        #expect(try liveRequest(port: first.port, "PUT", "/open/x.json?ns=delta", body: #""d""#, headers: owner).status == 200)
        first.signal(SIGTERM)
        #expect(try first.waitForExit() == 0)

        let second = try spawn()
        let rules = try liveRequest(port: second.port, "GET", "/.settings/rules.json?ns=gamma", headers: owner)
        #expect(rules.status == 200 && rules.body == replaced, "\(rules)\n\(second.log.suffix(2000))")
        #expect(try liveRequest(port: second.port, "GET", "/open/x.json?ns=gamma").body == #""g""#)
        #expect(try liveRequest(port: second.port, "PUT", "/open/y.json?ns=gamma", body: "1").status == 200)
        #expect(try liveRequest(port: second.port, "PUT", "/closed.json?ns=gamma", body: "1").status == 401)
        // Never replaced: the server's rules file, and its data kept.
        #expect(try liveRequest(port: second.port, "GET", "/.settings/rules.json?ns=delta", headers: owner).body == serverRules)
        #expect(try liveRequest(port: second.port, "PUT", "/open/y.json?ns=delta", body: "1").status == 401)
        #expect(try liveRequest(port: second.port, "GET", "/open/x.json?ns=delta").body == #""d""#)
        #expect(try liveRequest(port: second.port, "GET", "/open/x.json").body == "null")
        second.signal(SIGTERM)
        #expect(try second.waitForExit() == 0)
    }

    /// `hearth serve --accept-emulator-owner` says at start, as a warning, that `Bearer
    /// owner` is an admin for local clients; a serve without the flag says nothing of it.
    @Test func emulatorModeIsAnnouncedAtStart() throws {
        let warning = "emulator mode (--accept-emulator-owner) is on: `Bearer owner` is an admin"
        for flag in [true, false] {
            let data = dir.path + (flag ? "/with-flag" : "/without-flag")
            let server = try HearthProcess(
                arguments: ["serve", "--port", "0", "--data-dir", data,
                            "--rules", try HearthProcess.writeRules(#"{"rules": {".read": false, ".write": false}}"#, in: dir.path)]
                    + (flag ? ["--accept-emulator-owner"] : []),
                dataDirectory: data)
            try server.waitUntilListening()
            let log = server.log
            #expect(log.contains(warning) == flag, "\(log)")
            if flag, let line = log.split(separator: "\n").first(where: { $0.contains(warning) }) {
                #expect(line.lowercased().contains("warning"), "\(line)")
            }
            server.signal(SIGTERM)
            #expect(try server.waitForExit() == 0)
        }
    }

    /// The built binary in emulator mode, as a web page on the developer's machine would
    /// reach it: `Bearer owner` is refused from a page of another origin and through any
    /// forwarding header, allowed from a loopback page and from a process (no `Origin`); a
    /// preflight from another origin is not told `Authorization` is allowed; answers say
    /// `nosniff`; long-poll sessions per address stop at
    /// `longPollMaxSessionsPerAddress` (429 with an error) while the address's other
    /// requests are still served.
    @Test func emulatorCredentialsOnlyForThisMachinesPagesAndLongPollsPerAddress() throws {
        let data = dir.path + "/data"
        let server = try HearthProcess(
            arguments: ["serve", "--port", "0", "--data-dir", data, "--accept-emulator-owner",
                        "--rules", try HearthProcess.writeRules(#"{"rules": {".read": false, ".write": false}}"#, in: dir.path)],
            dataDirectory: data, environment: ["HEARTH_LONG_POLL_MAX_SESSIONS_PER_ADDRESS": "2"])
        try server.waitUntilListening()
        let url = server.baseURL + "/box.json"
        let owner = "Authorization: Bearer owner"
        #expect(try curl("PUT", url, body: #""kept""#, headers: [owner]).status == 200)
        for hostile in ["Origin: https://evil.example", "Origin: http://127.0.0.1.nip.io", "Via: 1.1 proxy", "CF-Connecting-IP: 203.0.113.9",
                        "X-Forwarded-For: 203.0.113.9"] {
            let refused = try curl("GET", url, headers: [owner, hostile])
            #expect(refused.status == 401 && refused.body.contains(#""error""#), "\(hostile): \(refused)")
            #expect(try curl("PUT", url, body: #""stolen""#, headers: [owner, hostile]).status == 401, "\(hostile)")
        }
        let local = try curl("GET", url, headers: [owner, "Origin: http://localhost:5173"])
        #expect(local.status == 200 && local.body == #""kept""#, "\(local)")
        #expect(local.headers["x-content-type-options"] == "nosniff", "\(local.headers)")
        let preflight = try curl("OPTIONS", url, headers: ["Origin: https://evil.example", "Access-Control-Request-Method: GET",
                                                           "Access-Control-Request-Headers: authorization"])
        #expect(!(preflight.headers["access-control-allow-headers"] ?? "").lowercased().contains("authorization"), "\(preflight.headers)")
        // Long-poll sessions: two per address, the third refused; REST still answers.
        let start = server.baseURL + "/.lp?start=t&ser=1&cb=7&v=5&ns=demo"
        for _ in 0..<2 {
            let session = try curl("GET", start, maxSeconds: 20)
            #expect(session.status == 200 && session.body.contains("pLPCommand"), "\(session)")
            #expect(session.headers["x-content-type-options"] == "nosniff", "\(session.headers)")
        }
        let third = try curl("GET", start, maxSeconds: 20)
        #expect(third.status == 429 && third.body.contains(#""error""#), "\(third)")
        #expect(try curl("GET", url, headers: [owner]).status == 200)
        server.signal(SIGTERM)
        #expect(try server.waitForExit() == 0)
    }

    /// `hearth rules check --namespaces-file`: every listed rules file, or one with `--ns`.
    @Test func rulesCheckTakesTheNamespacesFile() throws {
        try #"{"rules": {".read": true}}"#.write(toFile: dir.path + "/good.json", atomically: true, encoding: .utf8)
        try #"{"rules": {".read": tru}}"#.write(toFile: dir.path + "/bad.json", atomically: true, encoding: .utf8)
        let file = dir.path + "/namespaces.json"
        try #"{"namespaces": {"good-one": {"rules": "good.json"}, "bad-one": {"rules": "bad.json"}}}"#
            .write(toFile: file, atomically: true, encoding: .utf8)
        let all = try runHearth(["rules", "check", "--namespaces-file", file])
        #expect(all.status == 1 && all.output.contains("good.json: ok") && all.output.contains("bad.json"), "\(all)")
        let one = try runHearth(["rules", "check", "--namespaces-file", file, "--ns", "good-one"])
        #expect(one.status == 0 && !one.output.contains("bad.json"), "\(one)")
        #expect(try runHearth(["rules", "check", "--namespaces-file", file, "--ns", "other"]).status == 1)
    }
}
