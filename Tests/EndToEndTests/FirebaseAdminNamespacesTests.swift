import Foundation
import HearthTesting
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Two database instances of one project side by side through the official firebase-admin
/// SDK (`Python/admin_namespaces.py`), against the built binary in emulator mode without any
/// rules replacement: apps on `https://alpha.firebaseio.com` and `https://beta.firebaseio.com`
/// (FIREBASE_DATABASE_EMULATOR_HOST, so `?ns=alpha` and `?ns=beta`) each get a database of
/// their own on first use, running the server's rules file; an app on
/// `https://demo-proj-default-rtdb.firebaseio.com` reaches the default namespace of a server
/// started with `--project-id demo-proj`.
@Suite struct FirebaseAdminNamespacesTests {
    let dir = TemporaryDirectory()

    @Test func twoDatabasesSideBySideWithoutARulesReplacement() throws {
        let python = try pythonInterpreter()
        var environment: [String: String] = [:]
        if let url = try TestStore.postgresURL(for: dir.path) { environment["HEARTH_STORE"] = url }
        // Deny-all rules: the SDK's `Bearer owner` is an admin, so it writes anyway.
        let serverRules = #"{"rules": {".read": false, ".write": false}}"#
        let server = try HearthProcess(
            arguments: ["serve", "--port", "0", "--data-dir", dir.path, "--rules", try HearthProcess.writeRules(serverRules, in: dir.path),
                        "--accept-emulator-owner", "--project-id", "demo-proj"],
            dataDirectory: dir.path, environment: environment)
        try server.waitUntilListening()

        let result = try runPythonDriver(python, script: "admin_namespaces.py", arguments: [],
                                         environment: ["FIREBASE_DATABASE_EMULATOR_HOST": "127.0.0.1:\(server.port)"])
        #expect(result.status == 0 && result.stdout.hasSuffix("done\n"), "driver:\n\(result.stdout)\n\(result.stderr)")
        #expect(result.stdout.contains("ok alpha's listen gets alpha's write first"), "\(result.stdout)")

        // Seen over REST: each database holds its own app's writes; the default's names
        // (none, the project id, `<project id>-default-rtdb`) are one database.
        let owner = ["Authorization: Bearer owner"]
        for (query, value) in [("?ns=alpha", #""a""#), ("?ns=beta", #""b""#), ("", #""default""#),
                               ("?ns=demo-proj", #""default""#), ("?ns=demo-proj-default-rtdb", #""default""#)] {
            #expect(try curl("GET", server.baseURL + "/open/x.json" + query, headers: owner).body == value, "\(query)")
        }
        // Created with the server's rules file, which nobody replaced.
        #expect(try curl("GET", server.baseURL + "/.settings/rules.json?ns=alpha", headers: owner).body == serverRules)
        #expect(try curl("GET", server.baseURL + "/open/x.json?ns=beta").status == 401)
        // Two databases besides the default: alpha and beta, nothing for the default's names.
        let metrics = try curl("GET", server.baseURL + "/metrics").body
        #expect(metrics.split(separator: "\n").contains { $0.hasPrefix("hearth_namespaces ") && Double($0.split(separator: " ")[1]) == 2 },
                "\(metrics.split(separator: "\n").filter { $0.contains("namespace") })")
        // The access log names each request's namespace.
        #expect(server.log.contains("ns=alpha") && server.log.contains("ns=beta"), "\(server.log.suffix(3000))")

        server.signal(SIGTERM)
        #expect(try server.waitForExit() == 0)
    }
}
