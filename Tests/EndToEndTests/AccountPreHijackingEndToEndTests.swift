import Foundation
import HearthTesting
import Testing

/// Account pre-hijacking against the built binary: attack (b) replayed over HTTP, with a
/// local OpenID provider standing in for Google (its keys on another loopback port) and
/// the owner's reset mail caught by an SMTP server on loopback (`SMTPSink`).
@Suite struct AccountPreHijackingEndToEndTests {
    let dir = TemporaryDirectory()
    static let rules = #"{"rules": {"$uid": {".read": "auth != null && auth.uid == $uid", ".write": "auth != null && auth.uid == $uid"}}}"#

    func post(_ base: String, _ path: String, _ body: String) throws -> (status: Int, json: [String: Any]) {
        let result = try curl("POST", base + path, body: body, headers: ["Content-Type: application/json"])
        return (result.status, (json(result.body) as? [String: Any]) ?? [:])
    }

    func signInWithGoogle(_ base: String, _ token: String, linkTo idToken: String? = nil) throws -> (status: Int, json: [String: Any]) {
        let link = idToken.map { #","idToken":"\#($0)""# } ?? ""
        return try post(base, "/v1/accounts:signInWithIdp",
                        #"{"postBody":"id_token=\#(token)&providerId=google.com","requestUri":"http://localhost","returnSecureToken":true\#(link)}"#)
    }

    @Test func attackBEndsWithTheOwnersPasswordReset() throws {
        let sink = try SMTPSink(python: try pythonInterpreter())
        let provider = try TestOpenIDProvider()
        let providers = dir.path + "/providers.json"
        try #"{"providers": [{"providerId": "google.com", "issuer": "\#(provider.issuer)", "audiences": ["app"], "jwksURL": "\#(provider.jwksURL)"}]}"#
            .write(toFile: providers, atomically: true, encoding: .utf8)
        let server = try HearthProcess.serve(dataDirectory: dir.path, rules: Self.rules, environment: [
            "HEARTH_IDP_PROVIDERS": providers, "HEARTH_SMTP_URL": "smtp://127.0.0.1:\(sink.port)",
            "HEARTH_MAIL_FROM": "accounts@app.example.com", "HEARTH_ACTION_LINK_BASE": "https://app.example.com/action",
        ])
        let base = server.baseURL
        let attackerGoogle = provider.mint(sub: "attacker-google", audience: "app", overrides: ["email": "attacker@gmail.com"])

        // The attacker prepares the account: the victim's address, a password, their own Google.
        let up = try post(base, "/v1/accounts:signUp", #"{"email":"victim@example.com","password":"attacker-pw","returnSecureToken":true}"#)
        let uid = try #require(up.json["localId"] as? String)
        let attackerToken = try #require(up.json["idToken"] as? String)
        let attackerRefresh = try #require(up.json["refreshToken"] as? String)
        let linked = try signInWithGoogle(base, attackerGoogle, linkTo: attackerToken)
        #expect(linked.status == 200 && linked.json["localId"] as? String == uid, "\(linked.json)")

        // The owner cannot sign up, and resets the password from the mail.
        let taken = try post(base, "/v1/accounts:signUp", #"{"email":"victim@example.com","password":"owner-pw"}"#)
        #expect(EmailActionsEndToEndTests.error(taken.json) == "EMAIL_EXISTS")
        #expect(try post(base, "/v1/accounts:sendOobCode", #"{"requestType":"PASSWORD_RESET","email":"victim@example.com"}"#).status == 200)
        let code = try #require(try sink.nextMail().oobCode)
        #expect(try post(base, "/v1/accounts:resetPassword", #"{"oobCode":"\#(code)","newPassword":"owner-pw"}"#).status == 200)
        let owner = try post(base, "/v1/accounts:signInWithPassword", #"{"email":"victim@example.com","password":"owner-pw","returnSecureToken":true}"#)
        #expect(owner.json["localId"] as? String == uid)
        let ownerToken = try #require(owner.json["idToken"] as? String)
        #expect(try curl("PUT", base + "/\(uid)/diary.json?auth=\(ownerToken)", body: #""private""#).status == 200)

        // Every way the attacker had is closed: the Google link, the old tokens, the password.
        let again = try signInWithGoogle(base, attackerGoogle)
        #expect(again.status == 200 && again.json["localId"] as? String != uid, "\(again.json)")
        let againToken = try #require(again.json["idToken"] as? String)
        for token in [attackerToken, linked.json["idToken"] as? String ?? "", againToken] {
            #expect(try curl("GET", base + "/\(uid)/diary.json?auth=\(token)").status == 401)
        }
        let refreshed = try post(base, "/v1/token", #"{"grant_type":"refresh_token","refresh_token":"\#(attackerRefresh)"}"#)
        #expect(refreshed.status == 400)
        let password = try post(base, "/v1/accounts:signInWithPassword", #"{"email":"victim@example.com","password":"attacker-pw"}"#)
        #expect(EmailActionsEndToEndTests.error(password.json) == "INVALID_LOGIN_CREDENTIALS")
        #expect(try curl("GET", base + "/\(uid)/diary.json?auth=\(ownerToken)").body == #""private""#)
    }

    /// `hearth token` run while `hearth serve` starts on the same new data directory: both
    /// migrate the new database at once, and both succeed.
    @Test func hearthTokenWhileServeStartsOnANewDirectory() throws {
        for round in 0..<4 {
            let fresh = TemporaryDirectory()
            let server = try HearthProcess(arguments: ["serve", "--port", "0", "--data-dir", fresh.path, "--rules",
                                                       try HearthProcess.writeRules(HearthProcess.openRules, in: fresh.path)],
                                           dataDirectory: fresh.path)
            let token = try Spawn.run(HearthProcess.binaryPath, ["token", "--admin", "--data-dir", fresh.path], input: nil, captureStderr: true)
            #expect(token.status == 0, "round \(round): \(token.output)")
            try server.waitUntilListening()
            let admin = token.output.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(try curl("GET", server.baseURL + "/.json", headers: ["Authorization: Bearer \(admin)"]).status == 200, "round \(round)")
            server.signal(SIGTERM)
            #expect(try server.waitForExit() == 0)
        }
    }
}
