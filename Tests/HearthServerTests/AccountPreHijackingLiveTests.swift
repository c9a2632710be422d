import Foundation
import HearthJSON
import HearthStore
import HearthTesting
import Testing
@testable import HearthAccounts
@testable import HearthServer

/// Account pre-hijacking (Sudhodanan and Paverd, USENIX Security 2022) through the REST
/// endpoints, live: a server on 127.0.0.1 port 0 and a local OpenID provider standing in
/// for Google (`google.com`, trusted for gmail.com by default) and for an untrusted
/// `oidc.test`. Each attack ends with the attacker locked out and the owner alone in
/// control of the account and its data.
@Suite struct AccountPreHijackingLiveTests {
    typealias IdP = IdentityProviderLiveTests
    static let rules = #"{"rules": {"$uid": {".read": "auth != null && auth.uid == $uid", ".write": "auth != null && auth.uid == $uid"}}}"#

    static func server(_ provider: TestOpenIDProvider) throws -> LiveServer {
        try IdP.server(provider, rules: rules, extra: #"""
            , {"providerId": "google.com", "issuer": "\#(provider.issuer)", "audiences": ["\#(IdP.audience)"], "jwksURL": "\#(provider.jwksURL)"}
            """#)
    }

    static func post(_ server: LiveServer, _ path: String, _ body: String) throws -> (status: Int, json: [JSONKey: JSONValue]) {
        let response = try server.request("POST", path, body, headers: [("Content-Type", "application/json")])
        return (response.status, try JSONParser.parse(Array(response.body.utf8)).objectValue ?? [:])
    }

    /// The code a reset (or verification) mail to `email` would carry.
    static func mailedCode(_ server: LiveServer, _ kind: AccountService.ActionKind, for email: String) throws -> String {
        let service = server.service.authContext.service
        let user = try #require(try service.accounts.user(email: email))
        return try service.createActionCode(kind, for: user)
    }

    /// A provider token for `sub` with `email` and its `email_verified`.
    static func token(_ provider: TestOpenIDProvider, sub: String, email: String, verified: Bool = true) -> String {
        provider.mint(sub: sub, overrides: ["email": email, "email_verified": verified])
    }

    /// The uid, ID token and refresh token of a successful sign-in answer.
    static func session(_ answer: (status: Int, json: [JSONKey: JSONValue])) throws -> (uid: String, idToken: String, refresh: String) {
        #expect(answer.status == 200, "\(answer.json)")
        return (try #require(answer.json["localId"]?.stringValue), try #require(answer.json["idToken"]?.stringValue),
                try #require(answer.json["refreshToken"]?.stringValue))
    }

    static func signUp(_ server: LiveServer, _ email: String, _ password: String) throws -> (uid: String, idToken: String, refresh: String) {
        try session(try post(server, "/v1/accounts:signUp", #"{"email":"\#(email)","password":"\#(password)","returnSecureToken":true}"#))
    }

    static func signIn(_ server: LiveServer, _ email: String, _ password: String) throws -> (uid: String, idToken: String, refresh: String) {
        try session(try post(server, "/v1/accounts:signInWithPassword", #"{"email":"\#(email)","password":"\#(password)","returnSecureToken":true}"#))
    }

    /// The owner's reset with the mailed code, then a sign-in with the new password.
    static func reset(_ server: LiveServer, _ email: String, to password: String) throws -> (uid: String, idToken: String, refresh: String) {
        let code = try mailedCode(server, .passwordReset, for: email)
        #expect(try post(server, "/v1/accounts:resetPassword", #"{"oobCode":"\#(code)","newPassword":"\#(password)"}"#).status == 200)
        return try signIn(server, email, password)
    }

    /// Every way back in the attacker kept is refused: the ID tokens, the refresh tokens.
    static func expectLockedOut(_ server: LiveServer, uid: String, idTokens: [String], refreshTokens: [String]) throws {
        for token in idTokens {
            #expect(try server.request("GET", "/\(uid).json?auth=\(token)").status == 401)
        }
        for refresh in refreshTokens {
            let answer = try post(server, "/v1/token", #"{"grant_type":"refresh_token","refresh_token":"\#(refresh)"}"#)
            #expect(answer.status == 400, "\(answer.json)")
        }
    }

    /// Attack (b)'s preparation: a sign-up with the victim's address and the attacker's
    /// password, then the attacker's own Google account linked to it (the same uid).
    static func prepareAttackB(_ server: LiveServer, _ provider: TestOpenIDProvider, victim: String) throws
        -> (attacker: (uid: String, idToken: String, refresh: String), linked: (uid: String, idToken: String, refresh: String)) {
        let attacker = try signUp(server, victim, "attacker-pw")
        let linked = try session(try IdP.signIn(server, token: token(provider, sub: "attacker-google", email: "attacker@gmail.com"),
                                                provider: "google.com", idToken: attacker.idToken))
        #expect(linked.uid == attacker.uid)
        return (attacker, linked)
    }

    /// (b): the attacker signs up with the victim's address and a password, then links
    /// their own Google account; the owner cannot sign up, and resets the password.
    @Test func attackBAPasswordResetEndsTheAttackersSessionsAndLinks() async throws {
        let provider = try TestOpenIDProvider()
        let server = try Self.server(provider)
        let victim = "victim@example.com"
        let (attacker, linked) = try Self.prepareAttackB(server, provider, victim: victim)
        // The unverified address still blocks a sign-up (it is the password's login name).
        #expect(IdP.errorMessage(try Self.post(server, "/v1/accounts:signUp", #"{"email":"\#(victim)","password":"owner-pw"}"#).json) == "EMAIL_EXISTS")

        let owner = try Self.reset(server, victim, to: "owner-pw")
        #expect(owner.uid == attacker.uid)
        #expect(try server.request("PUT", "/\(owner.uid)/secret.json?auth=\(owner.idToken)", #""owner's""#).status == 200)

        // The attacker's Google account no longer reaches it: it signs in to an account of its own.
        let again = try Self.session(try IdP.signIn(server, token: Self.token(provider, sub: "attacker-google", email: "attacker@gmail.com"),
                                                    provider: "google.com"))
        #expect(again.uid != owner.uid)
        #expect(try server.request("GET", "/\(owner.uid)/secret.json?auth=\(again.idToken)").status == 401)
        #expect(IdP.errorMessage(try Self.post(server, "/v1/accounts:signInWithPassword", #"{"email":"\#(victim)","password":"attacker-pw"}"#).json)
                == "INVALID_LOGIN_CREDENTIALS")
        try Self.expectLockedOut(server, uid: owner.uid, idTokens: [attacker.idToken, linked.idToken], refreshTokens: [attacker.refresh, linked.refresh])
        // The owner's account: the verified address, the new password, no provider left.
        let user = try IdP.lookup(server, idToken: owner.idToken)
        #expect(user["emailVerified"] == .bool(true))
        #expect(user["providerUserInfo"]?.arrayValue?.contains { $0.objectValue?["providerId"] == "google.com" } != true)
        #expect(try server.request("GET", "/\(owner.uid)/secret.json?auth=\(owner.idToken)").body == #""owner's""#)
        await server.stop()
    }

    /// (b), undone by the owner's Google sign-in: Google's verified gmail address takes
    /// over the account, which never verified it, dropping the attacker's password and link.
    @Test func attackBTheOwnersGoogleSignInTakesOverTheUnverifiedAccount() async throws {
        let provider = try TestOpenIDProvider()
        let server = try Self.server(provider)
        let victim = "victim@gmail.com"
        let (attacker, linked) = try Self.prepareAttackB(server, provider, victim: victim)

        let signIn = try IdP.signIn(server, token: Self.token(provider, sub: "owner-google", email: victim), provider: "google.com")
        let owner = try Self.session(signIn)
        #expect(signIn.json["needConfirmation"] == nil)
        #expect(signIn.json["isNewUser"] == .bool(false))
        #expect(owner.uid == attacker.uid)
        #expect(try server.request("PUT", "/\(owner.uid)/secret.json?auth=\(owner.idToken)", #""owner's""#).status == 200)

        #expect(IdP.errorMessage(try Self.post(server, "/v1/accounts:signInWithPassword", #"{"email":"\#(victim)","password":"attacker-pw"}"#).json)
                == "INVALID_LOGIN_CREDENTIALS")
        let again = try Self.session(try IdP.signIn(server, token: Self.token(provider, sub: "attacker-google", email: "attacker@gmail.com"),
                                                    provider: "google.com"))
        #expect(again.uid != owner.uid)
        try Self.expectLockedOut(server, uid: owner.uid, idTokens: [attacker.idToken, linked.idToken, again.idToken],
                                 refreshTokens: [attacker.refresh, linked.refresh])
        let links = try IdP.lookup(server, idToken: owner.idToken)["providerUserInfo"]?.arrayValue ?? []
        #expect(links.compactMap { $0.objectValue?["rawId"]?.stringValue } == ["owner-google"])
        // An account whose address is verified is not taken over: the app links instead.
        let verified = try Self.signUp(server, "kept@gmail.com", "kept-pw")
        _ = try Self.post(server, "/v1/accounts:update", #"{"oobCode":"\#(try Self.mailedCode(server, .verifyEmail, for: "kept@gmail.com"))"}"#)
        let other = try IdP.signIn(server, token: Self.token(provider, sub: "kept-google", email: "kept@gmail.com"), provider: "google.com")
        #expect(other.json["needConfirmation"] == .bool(true) && other.json["idToken"] == nil)
        #expect(try Self.post(server, "/v1/accounts:signInWithPassword", #"{"email":"kept@gmail.com","password":"kept-pw"}"#).json["localId"]?.stringValue == verified.uid)
        await server.stop()
    }

    /// Only a trusted provider takes over: `oidc.test` (not trusted) with a verified email,
    /// and Google for an address outside gmail.com, both need confirmation.
    @Test func anUntrustedProviderOrAddressDoesNotTakeOver() async throws {
        let provider = try TestOpenIDProvider()
        let server = try Self.server(provider)
        let attacker = try Self.signUp(server, "ann@example.com", "attacker-pw")
        for (id, sub) in [("oidc.test", "corp-ann"), ("google.com", "google-ann")] {
            let answer = try IdP.signIn(server, token: Self.token(provider, sub: sub, email: "ann@example.com"), provider: id)
            #expect(answer.json["needConfirmation"] == .bool(true), "\(id): \(answer.json)")
        }
        #expect(try Self.post(server, "/v1/accounts:signInWithPassword", #"{"email":"ann@example.com","password":"attacker-pw"}"#).json["localId"]?.stringValue
                == attacker.uid)
        await server.stop()
    }

    /// Linking proves the address only through a trusted provider: the signed-in owner of
    /// an unverified gmail address links `oidc.test` (no change), then Google (verified).
    @Test func linkingATrustedProvidersVerifiedAddressVerifiesIt() async throws {
        let provider = try TestOpenIDProvider()
        let server = try Self.server(provider)
        let owner = try Self.signUp(server, "lin@gmail.com", "lin-pw")
        _ = try Self.session(try IdP.signIn(server, token: Self.token(provider, sub: "lin-corp", email: "lin@gmail.com"), idToken: owner.idToken))
        #expect(try IdP.lookup(server, idToken: owner.idToken)["emailVerified"] == .bool(false))
        let linked = try Self.session(try IdP.signIn(server, token: Self.token(provider, sub: "lin-google", email: "lin@gmail.com"),
                                                     provider: "google.com", idToken: owner.idToken))
        #expect(linked.uid == owner.uid)
        let user = try IdP.lookup(server, idToken: linked.idToken)
        #expect(user["emailVerified"] == .bool(true))
        let providers = Set(user["providerUserInfo"]?.arrayValue?.compactMap { $0.objectValue?["providerId"]?.stringValue } ?? [])
        #expect(providers == ["password", "oidc.test", "google.com"])
        #expect(try Self.signIn(server, "lin@gmail.com", "lin-pw").uid == owner.uid)  // the one who linked keeps the password
        await server.stop()
    }

    /// (a): the attacker signs in through a provider whose token says `email_verified:
    /// false` for the victim's address. The address is not claimed: the owner signs up
    /// and resets freely, and the attacker's account is another one.
    @Test func attackAAnUnverifiedProviderEmailClaimsNoAddress() async throws {
        let provider = try TestOpenIDProvider()
        let server = try Self.server(provider)
        let victim = "victim@example.com"
        let attack = try IdP.signIn(server, token: Self.token(provider, sub: "attacker-corp", email: victim, verified: false))
        let attacker = try Self.session(attack)
        #expect(attack.json["email"] == .string(victim))  // the provider's answer, as Firebase gives it
        let attackerUser = try IdP.lookup(server, idToken: attacker.idToken)
        #expect(attackerUser["email"] == nil)
        #expect(attackerUser["providerUserInfo"]?.arrayValue?.first?.objectValue?["email"] == .string(victim))
        #expect(IdP.claims(attacker.idToken)["email"] == nil)

        let owner = try Self.signUp(server, victim, "owner-pw")
        #expect(owner.uid != attacker.uid)
        #expect(try server.request("PUT", "/\(owner.uid)/secret.json?auth=\(owner.idToken)", #""owner's""#).status == 200)
        let ownerAgain = try Self.reset(server, victim, to: "owner-pw2")
        #expect(ownerAgain.uid == owner.uid)
        let back = try Self.session(try IdP.signIn(server, token: Self.token(provider, sub: "attacker-corp", email: victim, verified: false)))
        #expect(back.uid == attacker.uid)
        #expect(try server.request("GET", "/\(owner.uid)/secret.json?auth=\(back.idToken)").status == 401)
        await server.stop()
    }

    /// (a) on an account made before these rules (the unverified provider email stored as
    /// the account's address): the owner's reset drops the attacker's link.
    @Test func attackAOnAnAccountFromBeforeTheRulesEndsWithTheReset() async throws {
        let provider = try TestOpenIDProvider()
        let server = try Self.server(provider)
        let victim = "victim@example.com"
        var old = UserRecord(uid: "legacy-uid", email: victim, provider: .federated, createdAt: 1_000, validSince: 1)
        old.providerLinks = [ProviderLink(providerID: "oidc.test", rawID: "attacker-corp", email: victim)]
        try server.service.authContext.service.accounts.insert(old)
        let before = try Self.session(try IdP.signIn(server, token: Self.token(provider, sub: "attacker-corp", email: victim, verified: false)))
        #expect(before.uid == "legacy-uid")

        let owner = try Self.reset(server, victim, to: "owner-pw")
        #expect(owner.uid == "legacy-uid")
        #expect(try server.request("PUT", "/legacy-uid/secret.json?auth=\(owner.idToken)", #""owner's""#).status == 200)
        let after = try Self.session(try IdP.signIn(server, token: Self.token(provider, sub: "attacker-corp", email: victim, verified: false)))
        #expect(after.uid != "legacy-uid")
        try Self.expectLockedOut(server, uid: "legacy-uid", idTokens: [before.idToken, after.idToken], refreshTokens: [before.refresh])
        await server.stop()
    }

    /// A completed verification of an unverified address ends every session of the
    /// account and drops the links made before it; a reset ends them too.
    @Test func verificationAndResetEndEveryEarlierSession() async throws {
        let provider = try TestOpenIDProvider()
        let server = try Self.server(provider)
        let email = "dana@example.com"
        let first = try Self.signUp(server, email, "dana-pw1")
        let second = try Self.signIn(server, email, "dana-pw1")
        let linked = try Self.session(try IdP.signIn(server, token: Self.token(provider, sub: "dana-corp", email: "dana@corp.example"),
                                                     idToken: first.idToken))
        #expect(try server.request("PUT", "/\(first.uid).json?auth=\(second.idToken)", "1").status == 200)  // cached as valid

        let verified = try Self.post(server, "/v1/accounts:update", #"{"oobCode":"\#(try Self.mailedCode(server, .verifyEmail, for: email))"}"#)
        #expect(verified.status == 200 && verified.json["emailVerified"] == .bool(true), "\(verified.json)")
        try Self.expectLockedOut(server, uid: first.uid, idTokens: [first.idToken, second.idToken, linked.idToken],
                                 refreshTokens: [first.refresh, second.refresh, linked.refresh])
        let corp = try Self.session(try IdP.signIn(server, token: Self.token(provider, sub: "dana-corp", email: "dana@corp.example")))
        #expect(corp.uid != first.uid)  // the link made while unverified is gone

        let third = try Self.signIn(server, email, "dana-pw1")
        #expect(try server.request("PUT", "/\(first.uid).json?auth=\(third.idToken)", "2").status == 200)
        _ = try Self.reset(server, email, to: "dana-pw2")
        try Self.expectLockedOut(server, uid: first.uid, idTokens: [third.idToken], refreshTokens: [third.refresh])
        await server.stop()
    }
}
