import Foundation
import Testing

/// The console's administrators from the CLI and their sign-in against the built binary:
/// `hearth admins add|list|set-password|remove`, a session cookie from
/// `/console/api/session`, ended when the password changes while the server runs.
@Suite struct ConsoleEndToEndTests {
    let dir = TemporaryDirectory()

    func signIn(_ base: String, _ password: String) throws -> (status: Int, cookie: String?) {
        let result = try curl("POST", base + "/console/api/session", body: #"{"email":"ops@example.com","password":"\#(password)"}"#,
                              headers: ["Content-Type: application/json"])
        let cookie = result.headers["set-cookie"]?.split(separator: ";").first.map(String.init)
        return (result.status, cookie)
    }

    @Test func administratorsFromTheCLISignInToTheConsole() throws {
        let server = try HearthProcess.serve(dataDirectory: dir.path)
        let add = try run(HearthProcess.binaryPath, ["admins", "add", "--email", "Ops@Example.com", "--data-dir", dir.path], input: "a long admin password\n")
        #expect(add.status == 0, "\(add.output)")
        #expect(try run(HearthProcess.binaryPath, ["admins", "add", "--email", "ops@example.com", "--data-dir", dir.path], input: "a long admin password\n").status != 0)
        #expect(try Spawn.run(HearthProcess.binaryPath, ["admins", "add", "--email", "x@example.com", "--data-dir", dir.path], input: "short\n",
                              captureStderr: true).output.contains("password needs at least 10 characters"))
        #expect(try run(HearthProcess.binaryPath, ["admins", "list", "--data-dir", dir.path]).output == "ops@example.com\n")

        let page = try curl("GET", server.baseURL + "/console/")
        #expect(page.status == 200 && page.headers["x-frame-options"] == "DENY")
        #expect(try signIn(server.baseURL, "wrong password!!").status == 400)
        let (status, cookie) = try signIn(server.baseURL, "a long admin password")
        #expect(status == 200)
        let session = try #require(cookie)
        #expect(try curl("GET", server.baseURL + "/console/api/session", headers: ["Cookie: \(session)"]).status == 200)

        // The Health screen's source: the counters of /metrics, the database's size among them.
        #expect(try curl("GET", server.baseURL + "/console/api/metrics").status == 401)
        let metrics = try curl("GET", server.baseURL + "/console/api/metrics", headers: ["Cookie: \(session)"])
        let size = metrics.body.split(separator: "\n").first { $0.hasPrefix(#"hearth_database_bytes{namespace="(default)"} "#) }?.split(separator: " ").last.flatMap { Double($0) }
        #expect(metrics.status == 200 && (size ?? 0) > 0, "\(metrics.body.prefix(300))")

        // A new password from the CLI, while the server runs, ends the session.
        #expect(try run(HearthProcess.binaryPath, ["admins", "set-password", "ops@example.com", "--data-dir", dir.path],
                        input: "another long password\n").status == 0)
        #expect(try curl("GET", server.baseURL + "/console/api/session", headers: ["Cookie: \(session)"]).status == 401)
        #expect(try signIn(server.baseURL, "another long password").status == 200)
        #expect(try run(HearthProcess.binaryPath, ["admins", "remove", "ops@example.com", "--data-dir", dir.path]).status == 0)
        #expect(try run(HearthProcess.binaryPath, ["admins", "list", "--data-dir", dir.path]).output.isEmpty)
        #expect(try run(HearthProcess.binaryPath, ["admins", "remove", "ops@example.com", "--data-dir", dir.path]).status != 0)
    }

    /// The history of the rules as the console shows it: every change, whoever made it,
    /// with its author: the file found at the first start, a
    /// `PUT /.settings/rules.json` with an admin token, a save in the console, a `SIGHUP`
    /// reload, a file changed while Hearth was stopped; a start with the file unchanged
    /// adds nothing.
    @Test func everyChangeOfTheRulesIsInTheHistoryWithItsAuthor() throws {
        func history(_ base: String, _ cookie: String) throws -> [[String]] {
            let answer = try curl("GET", base + "/console/api/rules/history", headers: ["Cookie: \(cookie)"])
            let versions = try #require(try JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [[String: Any]], "\(answer.body)")
            return versions.map { [$0["savedBy"] as? String ?? "?", $0["text"] as? String ?? "?"] }
        }
        let rules = (0..<5).map { #"{"rules": {".read": true, ".write": true, "v\#($0)": {".read": true}}}"# }
        var server = try HearthProcess.serve(dataDirectory: dir.path, rules: rules[0])
        #expect(try run(HearthProcess.binaryPath, ["admins", "add", "--email", "ops@example.com", "--data-dir", dir.path],
                        input: "a long admin password\n").status == 0)
        let admin = try run(HearthProcess.binaryPath, ["token", "--admin", "--data-dir", dir.path]).output.trimmingCharacters(in: .whitespacesAndNewlines)
        let cookie = try #require(try signIn(server.baseURL, "a long admin password").cookie)
        #expect(try history(server.baseURL, cookie) == [["rules file (read at startup)", rules[0]]])

        #expect(try curl("PUT", server.baseURL + "/.settings/rules.json?auth=\(admin)", body: rules[1]).status == 200)
        let session = try curl("GET", server.baseURL + "/console/api/session", headers: ["Cookie: \(cookie)"])
        let csrf = try #require((try JSONSerialization.jsonObject(with: Data(session.body.utf8)) as? [String: Any])?["csrf"] as? String)
        let body = String(decoding: try JSONSerialization.data(withJSONObject: ["text": rules[2]]), as: UTF8.self)
        #expect(try curl("PUT", server.baseURL + "/console/api/rules", body: body,
                         headers: ["Cookie: \(cookie)", "X-CSRF-Token: \(csrf)", "Content-Type: application/json"]).status == 200)
        _ = try HearthProcess.writeRules(rules[3], in: dir.path)
        server.signal(SIGHUP)
        try server.waitForLog("rules reloaded", count: 1)
        server.signal(SIGTERM)
        #expect(try server.waitForExit() == 0)

        server = try HearthProcess.serve(dataDirectory: dir.path, rules: rules[4])  // changed while stopped
        server.signal(SIGTERM)
        #expect(try server.waitForExit() == 0)
        server = try HearthProcess.serve(dataDirectory: dir.path, rules: rules[4])  // unchanged
        let expected = [["rules file (read at startup)", rules[4]], ["rules file (reloaded on SIGHUP)", rules[3]],
                        ["ops@example.com", rules[2]], ["admin token (PUT /.settings/rules.json)", rules[1]],
                        ["rules file (read at startup)", rules[0]]]
        #expect(try history(server.baseURL, cookie) == expected)  // sessions survive a restart
    }

    /// A stream of the console's REST API starts with the console's security headers and
    /// no CORS grant, like every other console answer.
    @Test func theConsolesStreamsCarryTheSecurityHeaders() throws {
        let server = try HearthProcess.serve(dataDirectory: dir.path)
        #expect(try run(HearthProcess.binaryPath, ["admins", "add", "--email", "ops@example.com", "--data-dir", dir.path],
                        input: "a long admin password\n").status == 0)
        let cookie = try #require(try signIn(server.baseURL, "a long admin password").cookie)
        let stream = try CurlStream(server.baseURL + "/console/api/rest/.json", headers: ["Cookie: \(cookie)"], includeHead: true)
        try stream.waitFor("event: put")
        let head = (stream.text.components(separatedBy: "\r\n\r\n").first ?? "").lowercased()
        #expect(head.contains("content-type: text/event-stream"), "\(head)")
        #expect(head.contains("content-security-policy: default-src 'none'") && head.contains("x-frame-options: deny")
                && head.contains("x-content-type-options: nosniff") && head.contains("referrer-policy: no-referrer"), "\(head)")
        #expect(!head.contains("access-control-"), "\(head)")
        // Outside the console the same stream grants any origin, as Firebase's does.
        let open = try CurlStream(server.baseURL + "/.json", includeHead: true)
        try open.waitFor("event: put")
        #expect(open.text.lowercased().contains("access-control-allow-origin: *"))
    }

    @Test func behindAProxyTheConsoleIsOffUnlessTurnedOn() throws {
        let off = try HearthProcess.serve(dataDirectory: dir.path, environment: ["HEARTH_TRUSTED_PROXIES": "127.0.0.1"])
        #expect(try curl("GET", off.baseURL + "/console/api/session").status != 401)  // no console: a database path
        off.signal(SIGTERM)
        _ = try off.waitForExit()
        let on = try HearthProcess.serve(dataDirectory: dir.path, environment: ["HEARTH_TRUSTED_PROXIES": "127.0.0.1", "HEARTH_CONSOLE": "on"])
        #expect(try curl("GET", on.baseURL + "/console/api/session").status == 401)
    }
}
