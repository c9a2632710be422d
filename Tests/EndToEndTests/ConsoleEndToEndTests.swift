import Foundation
import Testing

/// The console's administrators from the CLI and their sign-in against the built binary
/// (issue 16, point 1): `hearth admins add|list|set-password|remove`, a session cookie from
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
        let size = metrics.body.split(separator: "\n").first { $0.hasPrefix("hearth_database_bytes ") }?.split(separator: " ").last.flatMap { Double($0) }
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

    @Test func behindAProxyTheConsoleIsOffUnlessTurnedOn() throws {
        let off = try HearthProcess.serve(dataDirectory: dir.path, environment: ["HEARTH_TRUSTED_PROXIES": "127.0.0.1"])
        #expect(try curl("GET", off.baseURL + "/console/api/session").status != 401)  // no console: a database path
        off.signal(SIGTERM)
        _ = try off.waitForExit()
        let on = try HearthProcess.serve(dataDirectory: dir.path, environment: ["HEARTH_TRUSTED_PROXIES": "127.0.0.1", "HEARTH_CONSOLE": "on"])
        #expect(try curl("GET", on.baseURL + "/console/api/session").status == 401)
    }
}
