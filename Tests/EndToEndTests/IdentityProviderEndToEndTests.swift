import Foundation
import HearthTesting
import Testing

/// Sign-in with an OpenID provider against the built binary: `hearth serve
/// --idp-providers FILE`, a local provider on another loopback port, a sign-in over
/// HTTP, the rules seeing the provider, and firebase-admin finding the user by provider
/// uid, listing its `provider_data` and unlinking it.
@Suite struct IdentityProviderEndToEndTests {
    static let projectID = "demo-hearth"

    @Test func theBinarySignsInWithAProviderAndFirebaseAdminSeesTheLink() throws {
        let python = try pythonInterpreter()
        let provider = try TestOpenIDProvider()
        let dir = TemporaryDirectory()
        let providers = dir.path + "/providers.json"
        try #"{"providers": [{"providerId": "oidc.corp", "issuer": "\#(provider.issuer)", "audiences": ["app"], "jwksURL": "\#(provider.jwksURL)"}]}"#
            .write(toFile: providers, atomically: true, encoding: .utf8)
        let rules = #"{"rules": {"$uid": {".write": "auth.uid == $uid && auth.provider == 'oidc.corp'", ".read": true}}}"#
        let server = try HearthProcess(
            arguments: ["serve", "--port", "0", "--data-dir", dir.path, "--rules", try HearthProcess.writeRules(rules, in: dir.path),
                        "--accept-emulator-owner", "--project-id", Self.projectID, "--idp-providers", providers],
            dataDirectory: dir.path)
        try server.waitUntilListening()

        let token = provider.mint(sub: "e2e-user", audience: "app", key: provider.ec)
        let body = #"{"postBody":"id_token=\#(token)&providerId=oidc.corp","requestUri":"http://localhost","returnSecureToken":true}"#
        let signIn = try liveRequest(port: server.port, "POST", "/identitytoolkit.googleapis.com/v1/accounts:signInWithIdp?key=k", body: body,
                                     headers: [("Content-Type", "application/json")])
        #expect(signIn.status == 200, "\(signIn.body)")
        let answer = try #require(try JSONSerialization.jsonObject(with: Data(signIn.body.utf8)) as? [String: Any])
        let uid = try #require(answer["localId"] as? String)
        let idToken = try #require(answer["idToken"] as? String)
        #expect(answer["isNewUser"] as? Bool == true)
        #expect(try liveRequest(port: server.port, "PUT", "/\(uid).json?auth=\(idToken)", body: "true").status == 200)

        let driver = try runPythonDriver(python, script: "admin_idp.py", arguments: [Self.projectID, "oidc.corp", "e2e-user"],
                                         environment: ["FIREBASE_AUTH_EMULATOR_HOST": "127.0.0.1:\(server.port)", "GOOGLE_CLOUD_PROJECT": nil])
        try #require(driver.status == 0, "\(driver.stderr)")
        let result = try #require(try JSONSerialization.jsonObject(with: Data(driver.stdout.utf8)) as? [String: Any], "\(driver.stdout)")
        #expect(result["uid"] as? String == uid)
        let data = result["provider_data"] as? [[String: Any]] ?? []
        #expect(data.count == 1)
        #expect(data.first?["provider_id"] as? String == "oidc.corp")
        #expect(data.first?["uid"] as? String == "e2e-user")
        #expect(data.first?["email"] as? String == "e2e-user@example.com")
        #expect((result["after_unlink"] as? [Any])?.isEmpty == true)
        #expect(result["found_after_unlink"] as? Bool == false)

        server.signal(SIGTERM)
        #expect(try server.waitForExit() == 0)
    }

    @Test func aProvidersFileWithCleartextKeysFromAnotherHostStopsTheStart() throws {
        let dir = TemporaryDirectory()
        let providers = dir.path + "/providers.json"
        try #"{"providers": [{"providerId": "oidc.corp", "issuer": "i", "audiences": ["app"], "jwksURL": "http://keys.example.com/jwks"}]}"#
            .write(toFile: providers, atomically: true, encoding: .utf8)
        let result = try Spawn.run(HearthProcess.binaryPath, ["serve", "--port", "0", "--data-dir", dir.path, "--rules",
                                                              try HearthProcess.writeRules(HearthProcess.openRules, in: dir.path),
                                                              "--idp-providers", providers], input: nil, captureStderr: true)
        #expect(result.status != 0)
        #expect(result.output.contains("idpProviders") && result.output.contains("loopback"), "\(result.output)")
    }

    /// Keep Firebase Auth, move the database: a Firebase project's ID token over the wire
    /// protocol (what the Database SDKs send in `auth`), its uid and provider in the rules.
    @Test func aFirebaseProjectsTokenIsAWireProtocolUser() throws {
        let python = try pythonInterpreter()
        let provider = try TestOpenIDProvider()
        let dir = TemporaryDirectory()
        let providers = dir.path + "/providers.json"
        try #"{"providers": [{"providerId": "firebase", "projectId": "my-project", "jwksURL": "\#(provider.certificatesURL)"}]}"#
            .write(toFile: providers, atomically: true, encoding: .utf8)
        let rules = #"{"rules": {"$uid": {".write": "auth.uid == $uid && auth.token.firebase.sign_in_provider == 'apple.com'", ".read": true}}}"#
        let server = try HearthProcess(
            arguments: ["serve", "--port", "0", "--data-dir", dir.path, "--rules", try HearthProcess.writeRules(rules, in: dir.path),
                        "--idp-providers", providers],
            dataDirectory: dir.path)
        try server.waitUntilListening()
        let token = provider.mint(sub: "fb-user", audience: "my-project", overrides: [
            "iss": "https://securetoken.google.com/my-project", "user_id": "fb-user",
            "firebase": ["sign_in_provider": "apple.com", "identities": ["apple.com": ["001.xyz"]]],
        ])
        let result = try runPythonDriver(python, script: "wire_client.py", arguments: ["external_token", String(server.port)],
                                         environment: ["EXTERNAL_TOKEN": token, "EXTERNAL_UID": "fb-user"])
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        for check in ["a Firebase project's token is accepted", "its user writes its own data", "and not another user's"] {
            #expect(result.stdout.contains("ok " + check), "\(result.stdout)")
        }
        #expect(try liveRequest(port: server.port, "GET", "/fb-user/state.json").body == #""online""#)
        server.signal(SIGTERM)
        #expect(try server.waitForExit() == 0)
    }
}
