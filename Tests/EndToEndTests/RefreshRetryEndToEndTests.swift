import Foundation
import HearthTesting
import Testing

/// Against the built binary: a client that never got the answer to a
/// refresh retries with the token it still has and stays signed in, keeping its account
/// and data: after a dropped response, and after Hearth was killed (SIGKILL) once the
/// rotation had committed.
@Suite struct RefreshRetryEndToEndTests {
    let dir = TemporaryDirectory()

    func post(_ url: String, _ body: String) throws -> (status: Int, json: [String: Any]) {
        let result = try curl("POST", url, body: body, headers: ["Content-Type: application/json"])
        return (result.status, (json(result.body) as? [String: Any]) ?? [:])
    }

    func refresh(_ base: String, _ token: String) throws -> (status: Int, json: [String: Any]) {
        try post(base + "/v1/token", #"{"grant_type":"refresh_token","refresh_token":"\#(token)"}"#)
    }

    static let rules = #"{"rules": {"users": {"$uid": {".read": "auth != null && auth.uid === $uid", ".write": "auth != null && auth.uid === $uid"}}}}"#

    @Test func aDroppedRefreshResponseIsRetriedWithTheSameToken() throws {
        let server = try HearthProcess.serve(dataDirectory: dir.path, rules: Self.rules)
        let base = server.baseURL
        let up = try post(base + "/v1/accounts:signUp", #"{"returnSecureToken":true}"#)
        let uid = try #require(up.json["localId"] as? String)
        let refreshToken = try #require(up.json["refreshToken"] as? String)

        // The request goes out, Hearth answers, and the answer never reaches the app: the
        // client reads nothing and its connection ends.
        let body = #"{"grant_type":"refresh_token","refresh_token":"\#(refreshToken)"}"#
        let socket = try LoopbackSocket(port: server.port)
        try socket.send("POST /v1/token HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)")
        #expect(socket.waitForClose())
        #expect(socket.buffer.starts(with: Array("HTTP/1.1 200".utf8)))  // it was answered (and rotated)

        let retry = try refresh(base, refreshToken)
        #expect(retry.status == 200, "\(retry.json)")
        #expect(retry.json["user_id"] as? String == uid)
        let again = try refresh(base, refreshToken)
        #expect(again.json["refresh_token"] as? String == retry.json["refresh_token"] as? String)  // idempotent
        let idToken = try #require(retry.json["id_token"] as? String)
        #expect(try curl("PUT", base + "/users/\(uid)/note.json", body: #""kept""#, headers: ["Authorization: Bearer \(idToken)"]).status == 200)
        let next = try #require(retry.json["refresh_token"] as? String)
        #expect(try refresh(base, next).status == 200)
    }

    /// The kill test: 8 anonymous users, each with data; each refreshes and
    /// the rotations commit; Hearth is killed before the apps read their answers; after
    /// the restart every app retries with its old token: 8 of 8 keep account and data.
    @Test func afterSIGKILLEveryAnonymousUserRetriesAndKeepsTheAccount() throws {
        var server = try HearthProcess.serve(dataDirectory: dir.path, rules: Self.rules)
        var users: [(uid: String, refresh: String, answered: [String: Any])] = []
        for index in 0..<8 {
            let up = try post(server.baseURL + "/v1/accounts:signUp", #"{"returnSecureToken":true}"#)
            let uid = try #require(up.json["localId"] as? String)
            let idToken = try #require(up.json["idToken"] as? String)
            #expect(try curl("PUT", server.baseURL + "/users/\(uid)/favorites/f.json", body: #"{"n":\#(index)}"#,
                             headers: ["Authorization: Bearer \(idToken)"]).status == 200)
            let refreshToken = try #require(up.json["refreshToken"] as? String)
            let answered = try refresh(server.baseURL, refreshToken)  // committed; the app never sees this
            #expect(answered.status == 200)
            users.append((uid, refreshToken, answered.json))
        }
        server.signal(SIGKILL)
        _ = try server.waitForExit()
        server = try HearthProcess.serve(dataDirectory: dir.path, rules: Self.rules)

        var kept = 0
        for (index, user) in users.enumerated() {
            let retry = try refresh(server.baseURL, user.refresh)
            guard retry.status == 200, let idToken = retry.json["id_token"] as? String else { continue }
            #expect(retry.json["refresh_token"] as? String == user.answered["refresh_token"] as? String)
            let read = try curl("GET", server.baseURL + "/users/\(user.uid)/favorites/f.json", headers: ["Authorization: Bearer \(idToken)"])
            if read.status == 200 && read.body == #"{"n":\#(index)}"# { kept += 1 }
        }
        #expect(kept == 8)
    }
}
