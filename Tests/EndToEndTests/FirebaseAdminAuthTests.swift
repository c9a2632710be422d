import Foundation
import Testing

/// The official Python firebase-admin SDK's auth module against the built binary, in
/// emulator mode (`FIREBASE_AUTH_EMULATOR_HOST`, docs/protocol/admin-client.md §7): user
/// management through `projects/P/accounts…` and `verify_id_token` of tokens Hearth issued,
/// with `check_revoked`. The SDK is driven by `Python/admin_auth.py`, run with
/// `$HEARTH_PYTHON` (set by scripts/test.sh); each of its checks is one JSON line, asserted
/// here one by one.
@Suite struct FirebaseAdminAuthTests {
    /// Not the default `hearth`: the SDK's project id and the server's must match.
    static let projectID = "demo-hearth"

    /// Every check the driver's `checks` mode prints, in order.
    static let checks = [
        "create_user", "create_user_with_uid", "create_user_duplicate_email", "create_user_duplicate_uid",
        "get_user", "get_user_by_email", "get_user_not_found", "get_users",
        "update_user", "update_user_delete_attribute", "update_user_not_found",
        "set_custom_user_claims", "set_custom_user_claims_hearth_reserved",
        "verify_id_token", "verify_id_token_check_revoked", "list_users_pages",
        "revoke_refresh_tokens", "verify_id_token_after_revoke_new_sign_in", "disabled_user_check_revoked",
        "delete_user", "delete_users",
    ]

    /// One line of the driver's output.
    struct Check: Sendable {
        var ok: Bool
        var details: String
    }

    /// One run of the `checks` mode against one server, shared by the checks' test cases
    /// (the checks build on each other: they create, change and delete the same users).
    struct Run: Sendable {
        var checks: [String: Check]
        var order: [String]
        var driver: DriverResult
        var serverExit: Int32
    }

    static let shared: Result<Run, any Error> = Result { try runChecks() }

    static func runChecks() throws -> Run {
        guard let python = ProcessInfo.processInfo.environment["HEARTH_PYTHON"] else {
            throw DriverMissing()
        }
        let dir = TemporaryDirectory()
        let server = try HearthProcess(
            arguments: ["serve", "--port", "0", "--data-dir", dir.path, "--rules", try HearthProcess.writeRules(HearthProcess.openRules, in: dir.path),
                        "--accept-emulator-owner", "--project-id", projectID],
            dataDirectory: dir.path)
        try server.waitUntilListening()
        let driver = try runAuthDriver(python, "checks", projectID: projectID, port: server.port)
        server.signal(SIGTERM)
        let exit = try server.waitForExit()
        var checks: [String: Check] = [:]
        var order: [String] = []
        for line in driver.stdout.split(separator: "\n") {
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  let name = object["name"] as? String, let ok = object["ok"] as? Bool else { continue }
            let details = object["details"].flatMap { try? JSONSerialization.data(withJSONObject: $0, options: [.fragmentsAllowed, .sortedKeys]) }
            checks[name] = Check(ok: ok, details: details.map { String(decoding: $0, as: UTF8.self) } ?? "")
            order.append(name)
        }
        return Run(checks: checks, order: order, driver: driver, serverExit: exit)
    }

    struct DriverMissing: Error, CustomStringConvertible {
        var description: String { "run scripts/test.sh (HEARTH_PYTHON not set)" }
    }

    @Test(arguments: FirebaseAdminAuthTests.checks)
    func check(_ name: String) throws {
        let run = try Self.shared.get()
        let check = try #require(run.checks[name], "no line for \(name); driver stdout:\n\(run.driver.stdout)\nstderr:\n\(run.driver.stderr)")
        #expect(check.ok, "\(name): \(check.details)")
    }

    /// The driver ran to its end, printed exactly the expected checks, and the server
    /// stopped cleanly afterwards.
    @Test func theDriverRanEveryCheck() throws {
        let run = try Self.shared.get()
        #expect(run.driver.status == 0, "driver failed: \(run.driver.stderr)")
        #expect(run.order == Self.checks, "driver output:\n\(run.driver.stdout)")
        #expect(run.serverExit == 0)
    }

    /// Without `--accept-emulator-owner`, `Bearer owner` is no credential: the SDK gets 401
    /// `INSUFFICIENT_PERMISSION` and raises `InsufficientPermissionError`.
    @Test func withoutTheFlagTheSDKIsRefused() throws {
        let python = try pythonInterpreter()
        let dir = TemporaryDirectory()
        let server = try HearthProcess(
            arguments: ["serve", "--port", "0", "--data-dir", dir.path, "--rules", try HearthProcess.writeRules(HearthProcess.openRules, in: dir.path),
                        "--project-id", Self.projectID],
            dataDirectory: dir.path)
        try server.waitUntilListening()
        let result = try runAuthDriver(python, "denied", projectID: Self.projectID, port: server.port)
        #expect(result.status == 0, "driver failed: \(result.stderr)")
        let line = result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "driver output: \(result.stdout)")
        #expect(object["name"] as? String == "create_user_denied")
        #expect(object["ok"] as? Bool == true, "\(line)")
        let details = object["details"] as? String ?? ""
        #expect(details.hasPrefix("InsufficientPermissionError") && details.contains("--accept-emulator-owner"), "\(line)")
        server.signal(SIGTERM)
        #expect(try server.waitForExit() == 0)
        // Nothing was created.
        let list = try run(HearthProcess.binaryPath, ["users", "list", "--data-dir", dir.path])
        #expect(list.status == 0)
        #expect(list.output.isEmpty)
    }
}

/// Runs `Python/admin_auth.py <mode> <projectID>` with `python` in emulator mode against
/// `127.0.0.1:port` (the auth emulator variable instead of the database one).
func runAuthDriver(_ python: String, _ mode: String, projectID: String, port: Int) throws -> DriverResult {
    try runPythonDriver(python, script: "admin_auth.py", arguments: [mode, projectID],
                        environment: ["FIREBASE_AUTH_EMULATOR_HOST": "127.0.0.1:\(port)", "GOOGLE_CLOUD_PROJECT": nil])
}
