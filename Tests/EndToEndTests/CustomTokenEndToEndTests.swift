import Foundation
import Testing

/// Custom tokens against the built binary with the official
/// firebase-admin SDK (`Python/custom_tokens.py`): a service account generated here,
/// configured with `HEARTH_CUSTOM_TOKEN_SERVICE_ACCOUNTS`; `create_custom_token` signs in
/// through Hearth; a rules decision on the custom claim; every refusal; Hearth's own
/// `hearth token --custom`; and firebase-admin's unsigned tokens in emulator mode only.
@Suite struct CustomTokenEndToEndTests {
    static let projectID = "demo-hearth"
    static let rules = #"{"rules": {"premium": {".read": "auth != null && auth.token.premium === true"}}}"#
    let dir = TemporaryDirectory()

    func lines(_ result: DriverResult) -> [String: (ok: Bool, line: String)] {
        var checks: [String: (Bool, String)] = [:]
        for line in result.stdout.split(separator: "\n") {
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  let name = object["name"] as? String, let ok = object["ok"] as? Bool else { continue }
            checks[name] = (ok, String(line))
        }
        return checks
    }

    static let checks = [
        "sdk_token_shape", "sign_in", "id_token_claims", "rules_see_the_claim", "rules_refuse_without_the_claim",
        "claims_survive_refresh", "second_sign_in_same_user", "v3_verify_custom_token", "hearth_minted_token",
        "tampered_payload", "unknown_signer", "wrong_audience", "expired", "lifetime_over_an_hour",
        "reserved_claim_firebase", "reserved_claim_hearth_admin", "alg_none_outside_emulator_mode", "hs256", "garbage", "missing_token",
    ]

    @Test func firebaseAdminCustomTokensSignInAndEverythingElseIsRefused() throws {
        let python = try pythonInterpreter()
        let account = dir.path + "/service-account.json", other = dir.path + "/other-account.json"
        for (path, email) in [(account, "backend@demo-hearth.iam.gserviceaccount.com"), (other, "stranger@demo-hearth.iam.gserviceaccount.com")] {
            let made = try runPythonDriver(python, script: "custom_tokens.py", arguments: ["account", path, email], environment: [:])
            #expect(made.status == 0, "\(made.stderr)")
        }
        let data = dir.path + "/data"
        try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: true)
        let server = try HearthProcess(
            arguments: ["serve", "--port", "0", "--data-dir", data, "--rules", try HearthProcess.writeRules(Self.rules, in: data),
                        "--project-id", Self.projectID],
            dataDirectory: data, environment: ["HEARTH_CUSTOM_TOKEN_SERVICE_ACCOUNTS": account])
        try server.waitUntilListening()
        let minted = try run(HearthProcess.binaryPath, ["token", "--custom", "--uid", "ops-1", "--claims", #"{"role":"ops"}"#, "--data-dir", data])
        #expect(minted.status == 0, "\(minted.output)")
        let hearthToken = minted.output.trimmingCharacters(in: .whitespacesAndNewlines)

        let result = try runPythonDriver(python, script: "custom_tokens.py",
                                         arguments: ["checks", String(server.port), Self.projectID, account, other, hearthToken],
                                         environment: ["FIREBASE_AUTH_EMULATOR_HOST": nil, "GOOGLE_CLOUD_PROJECT": nil])
        #expect(result.status == 0 && result.stdout.hasSuffix("done\n"), "driver: \(result.stdout)\n\(result.stderr)")
        let found = lines(result)
        for name in Self.checks {
            let check = found[name]
            #expect(check?.ok == true, "\(name): \(check?.line ?? "no line")\n\(result.stderr)")
        }
        #expect(found.count == Self.checks.count, "\(result.stdout)")
        // The signer's key never reaches the log.
        #expect(!server.log.contains("PRIVATE KEY"))
        server.signal(SIGTERM)
        #expect(try server.waitForExit() == 0)
    }

    @Test func unsignedEmulatorTokensOnlyInEmulatorMode() throws {
        let python = try pythonInterpreter()
        let server = try HearthProcess(
            arguments: ["serve", "--port", "0", "--data-dir", dir.path, "--rules", try HearthProcess.writeRules(HearthProcess.openRules, in: dir.path),
                        "--project-id", Self.projectID, "--accept-emulator-owner"],
            dataDirectory: dir.path)
        try server.waitUntilListening()
        let result = try runPythonDriver(python, script: "custom_tokens.py", arguments: ["emulator", String(server.port), Self.projectID],
                                         environment: ["FIREBASE_AUTH_EMULATOR_HOST": "127.0.0.1:\(server.port)", "GOOGLE_CLOUD_PROJECT": nil])
        let found = lines(result)
        #expect(found["emulator_token_is_unsigned"]?.ok == true, "\(result.stdout)\n\(result.stderr)")
        #expect(found["emulator_sign_in"]?.ok == true, "\(result.stdout)\n\(result.stderr)")
        server.signal(SIGTERM)
        #expect(try server.waitForExit() == 0)
    }

    @Test func aBadServiceAccountFileStopsTheStartWithItsName() throws {
        try expectBadServiceAccountFileStopsTheStart(variable: "HEARTH_CUSTOM_TOKEN_SERVICE_ACCOUNTS", setting: "customTokenServiceAccounts", in: dir.path)
    }
}
