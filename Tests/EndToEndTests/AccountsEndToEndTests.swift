import Foundation
import Testing

/// The reference app's flow against the built binary with curl (sign up, sign in, refresh,
/// the user's own favourites; README "Quickstart"), and
/// the operator commands working on the data directory while the server runs.
@Suite struct AccountsEndToEndTests {
    let dir = TemporaryDirectory()

    func post(_ url: String, _ body: String, form: Bool = false) throws -> (status: Int, json: [String: Any]) {
        let result = try curl("POST", url, body: body, headers: [form ? "Content-Type: application/x-www-form-urlencoded" : "Content-Type: application/json"])
        return (result.status, (json(result.body) as? [String: Any]) ?? [:])
    }

    static func favorite(_ uid: String) -> String {
        #"{"id":"f1","name":"Oslo","createdAt":1700000000000,"createdBy":"\#(uid)","latitude":59.9,"longitude":10.7}"#
    }

    static func errorCode(_ json: [String: Any]) -> String? {
        (json["error"] as? [String: Any])?["message"] as? String
    }

    @Test func theReferenceFlowWithCurl() throws {
        // No user-status cache, so an operator's change applies to the very next request.
        let server = try HearthProcess.serve(dataDirectory: dir.path, rules: RulesEndToEndTests.referenceRules,
                                             environment: ["HEARTH_USER_STATUS_CACHE_SECONDS": "0"])
        let base = server.baseURL

        // Anonymous sign-up, then writes under the own uid only.
        let anon = try post(base + "/v1/accounts:signUp", #"{"returnSecureToken":true}"#)
        #expect(anon.status == 200)
        let uid = try #require(anon.json["localId"] as? String)
        let token = try #require(anon.json["idToken"] as? String)
        let bearer = "Authorization: Bearer \(token)"
        #expect(try curl("PUT", base + "/users/\(uid)/favorites/f1.json", body: Self.favorite(uid), headers: [bearer]).status == 200)
        #expect(try curl("GET", base + "/users/\(uid)/favorites.json?auth=\(token)").status == 200)
        #expect(try curl("PUT", base + "/users/someone/favorites/f1.json", body: Self.favorite(uid), headers: [bearer]).status == 401)

        // Email sign-up and sign-in; the other user cannot read the first one's favourites.
        let up = try post(base + "/identitytoolkit.googleapis.com/v1/accounts:signUp?key=x", #"{"email":"bo@example.com","password":"hunter22","returnSecureToken":true}"#)
        #expect(up.status == 200)
        let signIn = try post(base + "/v1/accounts:signInWithPassword", #"{"email":"bo@example.com","password":"hunter22","returnSecureToken":true}"#)
        #expect(signIn.status == 200)
        let boToken = try #require(signIn.json["idToken"] as? String)
        #expect(try curl("GET", base + "/users/\(uid)/favorites.json", headers: ["Authorization: Bearer \(boToken)"]).status == 401)
        let wrong = try post(base + "/v1/accounts:signInWithPassword", #"{"email":"bo@example.com","password":"nope-nope"}"#)
        #expect(wrong.status == 400)
        #expect(Self.errorCode(wrong.json) == "INVALID_LOGIN_CREDENTIALS")

        // Refresh (form-encoded, as the SDKs send it) rotates the refresh token.
        let refreshToken = try #require(signIn.json["refreshToken"] as? String)
        let refreshed = try post(base + "/securetoken.googleapis.com/v1/token?key=x", "grant_type=refresh_token&refresh_token=\(refreshToken)", form: true)
        #expect(refreshed.status == 200)
        #expect(refreshed.json["refresh_token"] as? String != refreshToken)
        // A retry with the old token (its answer lost) gets the same pair; once
        // the new token has been used, the old one is a replay and refused.
        let again = try post(base + "/v1/token", "grant_type=refresh_token&refresh_token=\(refreshToken)", form: true)
        #expect(again.status == 200)
        #expect(again.json["refresh_token"] as? String == refreshed.json["refresh_token"] as? String)
        #expect(again.json["id_token"] as? String == refreshed.json["id_token"] as? String)
        let newRefresh = try #require(refreshed.json["refresh_token"] as? String)
        #expect(try post(base + "/v1/token", "grant_type=refresh_token&refresh_token=\(newRefresh)", form: true).status == 200)
        let replay = try post(base + "/v1/token", "grant_type=refresh_token&refresh_token=\(refreshToken)", form: true)
        #expect(Self.errorCode(replay.json) == "INVALID_REFRESH_TOKEN")

        // Sign-out by revocation: disabling the user refuses their tokens at once (the
        // operator command runs while the server serves).
        let boUID = try #require(up.json["localId"] as? String)
        let disable = try run(HearthProcess.binaryPath, ["users", "disable", boUID, "--data-dir", dir.path])
        #expect(disable.status == 0)
        let newBo = try #require(refreshed.json["id_token"] as? String)
        #expect(try curl("GET", base + "/users/\(boUID)/favorites.json", headers: ["Authorization: Bearer \(newBo)"]).status == 401)

        // Sign-out by revocation: the anonymous user's tokens stop working, their refresh
        // token too.
        let anonRefresh = try #require(anon.json["refreshToken"] as? String)
        #expect(try run(HearthProcess.binaryPath, ["users", "revoke", uid, "--data-dir", dir.path]).status == 0)
        #expect(try curl("GET", base + "/users/\(uid)/favorites.json", headers: [bearer]).status == 401)
        #expect(Self.errorCode(try post(base + "/v1/token", "grant_type=refresh_token&refresh_token=\(anonRefresh)", form: true).json) == "INVALID_REFRESH_TOKEN")

        // JWKS and an operator's admin token.
        #expect(try curl("GET", base + "/.well-known/jwks.json").body.contains("Ed25519"))
        let admin = try run(HearthProcess.binaryPath, ["token", "--admin", "--data-dir", dir.path])
        let adminToken = admin.output.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try curl("GET", base + "/.json", headers: ["Authorization: Bearer \(adminToken)"]).status == 200)
        let userToken = try run(HearthProcess.binaryPath, ["token", "--uid", uid, "--data-dir", dir.path]).output.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try curl("GET", base + "/users/\(uid)/favorites.json", headers: ["Authorization: Bearer \(userToken)"]).status == 200)
        #expect(try curl("GET", base + "/.json", headers: ["Authorization: Bearer \(userToken)"]).status == 401)

        // Key rotation: old tokens keep working, new ones are signed by the new key.
        #expect(try run(HearthProcess.binaryPath, ["keys", "rotate", "--data-dir", dir.path]).status == 0)
        #expect(try curl("GET", base + "/users/\(uid)/favorites.json", headers: ["Authorization: Bearer \(userToken)"]).status == 200)
        let rotated = try run(HearthProcess.binaryPath, ["token", "--uid", uid, "--data-dir", dir.path]).output.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try curl("GET", base + "/users/\(uid)/favorites.json", headers: ["Authorization: Bearer \(rotated)"]).status == 200)

        let keyFiles = try FileManager.default.contentsOfDirectory(atPath: dir.path + "/keys").filter { $0.hasSuffix(".key") }
        #expect(keyFiles.count == 2)
        for file in keyFiles {
            let mode = try FileManager.default.attributesOfItem(atPath: dir.path + "/keys/" + file)[.posixPermissions] as? Int
            #expect(mode == 0o600)
        }
        server.signal(SIGTERM)
        #expect(try server.waitForExit() == 0)
    }

    @Test func usersCommands() throws {
        let add = try run(HearthProcess.binaryPath, ["users", "add", "--email", "Op@Example.com", "--data-dir", dir.path], input: "s3cret-pw\n")
        #expect(add.status == 0)
        let uid = add.output.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(uid.count == 28)
        let list = try run(HearthProcess.binaryPath, ["users", "list", "--data-dir", dir.path])
        #expect(list.output.contains("\(uid)\top@example.com\tpassword\tenabled"))
        #expect(try run(HearthProcess.binaryPath, ["users", "set-password", uid, "--data-dir", dir.path], input: "another-pw\n").status == 0)
        #expect(try run(HearthProcess.binaryPath, ["users", "disable", uid, "--data-dir", dir.path]).status == 0)
        #expect(try run(HearthProcess.binaryPath, ["users", "list", "--data-dir", dir.path]).output.contains("disabled"))
        #expect(try run(HearthProcess.binaryPath, ["users", "enable", uid, "--data-dir", dir.path]).status == 0)
        #expect(try run(HearthProcess.binaryPath, ["users", "delete", uid, "--data-dir", dir.path]).status == 0)
        #expect(try run(HearthProcess.binaryPath, ["users", "delete", uid, "--data-dir", dir.path]).status == 1)
        #expect(try run(HearthProcess.binaryPath, ["users", "add", "--email", "bad", "--data-dir", dir.path], input: "s3cret-pw\n").status == 1)
    }
}
