import Foundation
import Dispatch
import HearthAccounts
import HearthHTTP
import HearthJSON
import HearthMail
import HearthStore
import Testing
@testable import HearthServer

/// The console's Users API at the router: search, pages of
/// `usersPageSize`, details, disable and enable (the user's next request refused, then
/// served), revoke, custom claims (Firebase's checks), delete, and a reset mail refused
/// clearly without SMTP.
@Suite struct ConsoleUsersTests {
    let h: RouterHarness
    let cookie: String
    let csrf: String

    init() async throws {
        var settings = AuthSettings()
        settings.userStatusCacheSeconds = 0
        h = try RouterHarness(settings: settings, console: true)
        (cookie, csrf) = try await h.consoleSession()
    }

    func call(_ method: String, _ endpoint: String, _ body: String? = nil) async -> HTTPResponse {
        await h.send(method, "/console/api/" + endpoint, body, headers: [("Cookie", cookie), ("X-CSRF-Token", csrf), ("Content-Type", "application/json")])
    }

    @Test func searchAndPages() async throws {
        let ann = try h.auth.service.signUp(email: "ann@example.com", password: "secret1")
        for _ in 0..<ConsoleRoute.usersPageSize { _ = try h.auth.service.signUpAnonymously() }
        let byEmail = try #require(await call("GET", "users?q=ANN%40example.com").json?.objectValue?["users"]?.arrayValue)
        #expect(byEmail.count == 1 && byEmail.first?.objectValue?["localId"] == .string(ann.user.uid))
        #expect(await call("GET", "users?q=\(ann.user.uid)").json?.objectValue?["users"]?.arrayValue?.count == 1)
        #expect(await call("GET", "users?q=nobody%40example.com").json?.objectValue?["users"] == .array([]))
        let first = try #require(await call("GET", "users").json?.objectValue)
        #expect(first["users"]?.arrayValue?.count == ConsoleRoute.usersPageSize)
        let next = try #require(first["next"]?.stringValue)
        let second = try #require(await call("GET", "users?after=\(next)").json?.objectValue)
        #expect(second["users"]?.arrayValue?.count == 1 && second["next"] == nil)
        let details = try #require(await call("GET", "users/\(ann.user.uid)").json?.objectValue)
        #expect(details["provider"] == "password" && details["email"] == "ann@example.com")
        #expect(await call("GET", "users/nobody").status == 400)
    }

    @Test func detailsListTheLinkedProviders() async throws {
        var user = UserRecord(uid: "linked", email: "lin@example.com", provider: .federated, createdAt: 1, validSince: 0)
        user.providerLinks = [ProviderLink(providerID: "apple.com", rawID: "001.abc", email: "lin@example.com")]
        try h.auth.service.accounts.insert(user)
        let details = try #require(await call("GET", "users/linked").json?.objectValue)
        #expect(details["provider"] == "federated")
        let links = details["providerUserInfo"]?.arrayValue ?? []
        #expect(links.count == 1)
        #expect(links.first?.objectValue?["providerId"] == "apple.com" && links.first?.objectValue?["rawId"] == "001.abc")
    }

    @Test func disableEnableRevokeClaimsAndDelete() async throws {
        let ann = try h.auth.service.signUp(email: "ann@example.com", password: "secret1")
        let bearer = [("Authorization", "Bearer \(ann.idToken)")]
        #expect(await h.send("GET", "/open.json", headers: bearer).status == 200)
        #expect(await call("POST", "users/\(ann.user.uid)/disable", "{}").status == 200)
        #expect(await h.send("GET", "/open.json", headers: bearer).status == 401)
        #expect(await call("POST", "users/\(ann.user.uid)/enable", "{}").status == 200)
        // Disabling also revoked the old tokens (as `hearth users disable` does); a new sign-in works.
        #expect(await h.send("GET", "/open.json", headers: bearer).status == 401)
        let again = try h.auth.service.signIn(email: "ann@example.com", password: "secret1")
        let fresh = [("Authorization", "Bearer \(again.idToken)")]
        #expect(await h.send("GET", "/open.json", headers: fresh).status == 200)
        #expect(await call("POST", "users/\(ann.user.uid)/revoke", "{}").status == 200)
        #expect(await h.send("GET", "/open.json", headers: fresh).status == 401)
        #expect(await call("PUT", "users/\(ann.user.uid)/claims", #"{"claims":{"role":"editor"}}"#).status == 200)
        #expect(try h.auth.service.accounts.user(uid: ann.user.uid)?.customClaims == #"{"role":"editor"}"#)
        let reserved = await call("PUT", "users/\(ann.user.uid)/claims", #"{"claims":{"firebase":1}}"#)
        #expect(reserved.status == 400 && reserved.json?.objectValue?["error"]?.stringValue?.hasPrefix("FORBIDDEN_CLAIM") == true)
        let reset = await call("POST", "users/\(ann.user.uid)/reset", "{}")
        #expect(reset.status == 501 && reset.json?.objectValue?["error"]?.stringValue?.hasPrefix("EMAIL_NOT_CONFIGURED") == true)
        // Without the CSRF token nothing changes.
        let forged = await h.send("DELETE", "/console/api/users/\(ann.user.uid)", headers: [("Cookie", cookie)])
        #expect(forged.status == 403)
        #expect(await call("DELETE", "users/\(ann.user.uid)").status == 200)
        #expect(try h.auth.service.accounts.user(uid: ann.user.uid) == nil)
    }

    /// Any uid Firebase allows (a custom token's `uid` may hold `/`, `%`, `?`, spaces,
    /// U+202E) is reached through its percent-encoded segment: opened, disabled, enabled,
    /// revoked, deleted. The path is never split inside a uid: `users/team/ann` unencoded
    /// names no action of the user `team`, and leaves that user alone.
    @Test func anyUidIsReachedThroughItsPercentEncodedSegment() async throws {
        _ = try h.token(for: "team")
        for uid in ["team/ann", "50%/a b?c#d", "x\u{202E}gnp.exe", "ユーザー/1"] {
            _ = try h.token(for: uid)
            let segment = try #require(uid.addingPercentEncoding(withAllowedCharacters: .alphanumerics))
            let details = await call("GET", "users/\(segment)")
            #expect(details.status == 200 && details.json?.objectValue?["localId"] == .string(uid), "\(uid): \(details.text)")
            let found = await call("GET", "users?q=\(segment)").json?.objectValue?["users"]?.arrayValue
            #expect(found?.first?.objectValue?["localId"] == .string(uid))
            #expect(await call("POST", "users/\(segment)/disable", "{}").status == 200)
            #expect(try h.auth.service.accounts.user(uid: uid)?.disabled == true)
            #expect(await call("POST", "users/\(segment)/enable", "{}").status == 200)
            #expect(try h.auth.service.accounts.user(uid: uid)?.disabled == false)
            let bearer = try h.bearer(uid)
            #expect(await h.send("GET", "/open.json", headers: bearer).status == 200)
            #expect(await call("POST", "users/\(segment)/revoke", "{}").status == 200)
            #expect(await h.send("GET", "/open.json", headers: bearer).status == 401)
            #expect(await call("PUT", "users/\(segment)/claims", #"{"claims":{"role":"ops"}}"#).status == 200)
            #expect(try h.auth.service.accounts.user(uid: uid)?.customClaims == #"{"role":"ops"}"#)
            #expect(await call("DELETE", "users/\(segment)").status == 200)
            #expect(try h.auth.service.accounts.user(uid: uid) == nil, "\(uid)")
        }
        #expect(await call("DELETE", "users/team/ann").status == 404)
        #expect(await call("POST", "users/team/ann/disable", "{}").status == 404)
        #expect(await call("GET", "users/team%zz").status == 400)
        let team = try #require(try h.auth.service.accounts.user(uid: "team"))
        #expect(!team.disabled)
    }
}

/// The console's "Send password reset" with a mail server configured: the mail leaves
/// through the same queue as `sendOobCode`, with a working reset code.
@Suite struct ConsoleResetMailTests {
    @Test func aResetMailFromTheConsole() async throws {
        let outbox = EmailActionLimitsTests.Outbox()
        let mailer = Mailer(deliver: { message throws(MailError) in outbox.sent.withLock { $0.append(message) } },
                            report: { _, _ in outbox.arrived.signal() })
        let h = try RouterHarness(mailer: mailer, console: true)
        try h.router.context.console!.add(email: "root@example.com", password: "correct horse battery")
        let signIn = await h.send("POST", "/console/api/session", #"{"email":"root@example.com","password":"correct horse battery"}"#,
                                  headers: [("Content-Type", "application/json")])
        let cookie = String(try #require(signIn.headers["Set-Cookie"]?.split(separator: ";").first))
        let csrf = try #require(signIn.json?.objectValue?["csrf"]?.stringValue)
        let ann = try h.auth.service.signUp(email: "ann@example.com", password: "secret1")
        let sent = await h.send("POST", "/console/api/users/\(ann.user.uid)/reset", "{}",
                                headers: [("Cookie", cookie), ("X-CSRF-Token", csrf), ("Content-Type", "application/json")])
        #expect(sent.status == 200 && sent.json?.objectValue?["sent"] == "ann@example.com")
        #expect(outbox.arrived.wait(timeout: .now() + .seconds(30)) == .success)
        let mail = try #require(outbox.sent.withLock { $0.first })
        #expect(mail.to == "ann@example.com")
        let marker = try #require(mail.body.range(of: "oobCode="))
        let code = String(mail.body[marker.upperBound...].prefix { $0 != "&" })
        #expect(try h.auth.service.resetPassword(code: code, newPassword: "new-secret") == "ann@example.com")
    }
}
