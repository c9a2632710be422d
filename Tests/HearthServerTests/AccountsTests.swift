import Dispatch
import HearthAuth
import HearthHTTP
import HearthJSON
import HearthRules
import HearthSQLite
import HearthStore
import HearthTesting
import Synchronization
import Testing
@testable import HearthAccounts
@testable import HearthServer

/// The Identity Toolkit endpoints (docs/protocol/auth.md §4) and tokens in use on REST
/// paths.
@Suite struct AccountsTests {
    let h: RouterHarness
    init() throws {
        h = try RouterHarness(policy: RulesAccessPolicy(rules: try RuleSet.compile(RulesEnforcementTests.referenceRules)))
    }

    func post(_ path: String, _ body: String, contentType: String = "application/json", address: String = "127.0.0.1") async -> HTTPResponse {
        let request = HTTPRequest(method: "POST", target: path, headers: HTTPHeaders([(name: "Content-Type", value: contentType)]),
                                  body: Array(body.utf8), remoteAddress: address)
        return await withCheckedContinuation { continuation in
            h.router.handle(request, responder: HTTPResponder { continuation.resume(returning: $0) })
        }
    }

    func field(_ response: HTTPResponse, _ name: String) -> String? {
        response.json?.objectValue?[name]?.stringValue
    }

    func errorCode(_ response: HTTPResponse) -> String? {
        response.json?.objectValue?["error"]?.objectValue?["message"]?.stringValue
    }

    static func favorite(by uid: String) -> String { RulesEnforcementTests.favorite("f1", by: uid) }

    @Test func anonymousSignUpGivesATokenThatWritesOnlyTheOwnFavorites() async throws {
        let signUp = await post("/v1/accounts:signUp", #"{"returnSecureToken":true}"#)
        #expect(signUp.status == 200)
        #expect(field(signUp, "kind") == "identitytoolkit#SignupNewUserResponse")
        #expect(field(signUp, "expiresIn") == "3600")
        let uid = try #require(field(signUp, "localId"))
        let token = try #require(field(signUp, "idToken"))
        #expect(uid.count == 28)
        #expect(field(signUp, "refreshToken")?.isEmpty == false)

        let own = await h.send("PUT", "/users/\(uid)/favorites/f1.json", Self.favorite(by: uid), headers: [("Authorization", "Bearer \(token)")])
        #expect(own.status == 200)
        let viaQuery = await h.send("GET", "/users/\(uid)/favorites.json?auth=\(token)")
        #expect(viaQuery.status == 200)
        let other = await h.send("PUT", "/users/someoneelse/favorites/f1.json", Self.favorite(by: uid), headers: [("Authorization", "Bearer \(token)")])
        #expect(other.status == 401)
        let otherRead = await h.send("GET", "/users/someoneelse/favorites.json", headers: [("Authorization", "Bearer \(token)")])
        #expect(otherRead.status == 401)
    }

    @Test func emailSignUpSignInAndTheErrorsOfSpec4() async throws {
        let up = await post("/identitytoolkit.googleapis.com/v1/accounts:signUp?key=any", #"{"email":"Ann@Example.com","password":"secret1","returnSecureToken":true}"#)
        #expect(up.status == 200)
        #expect(field(up, "email") == "ann@example.com")
        #expect(errorCode(await post("/v1/accounts:signUp", #"{"email":"ann@example.com","password":"secret1"}"#)) == "EMAIL_EXISTS")
        #expect(errorCode(await post("/v1/accounts:signUp", #"{"email":"b@example.com","password":"12345"}"#)) == "WEAK_PASSWORD : Password should be at least 6 characters")
        #expect(errorCode(await post("/v1/accounts:signUp", #"{"email":"not-an-email","password":"secret1"}"#)) == "INVALID_EMAIL")
        #expect(errorCode(await post("/v1/accounts:signUp", #"{"email":"c@example.com"}"#)) == "MISSING_PASSWORD")
        #expect(errorCode(await post("/v1/accounts:signUp", "{not json")) == "INVALID_JSON_PAYLOAD : the body must be a JSON object")

        let signIn = await post("/v1/accounts:signInWithPassword", #"{"email":"ANN@example.com","password":"secret1","returnSecureToken":true}"#)
        #expect(signIn.status == 200)
        #expect(field(signIn, "kind") == "identitytoolkit#VerifyPasswordResponse")
        #expect(signIn.json?.objectValue?["registered"] == .bool(true))
        #expect(field(signIn, "localId") == field(up, "localId"))
        let wrong = await post("/v1/accounts:signInWithPassword", #"{"email":"ann@example.com","password":"wrong!!"}"#)
        let unknown = await post("/v1/accounts:signInWithPassword", #"{"email":"nobody@example.com","password":"wrong!!"}"#)
        #expect(wrong.status == 400 && unknown.status == 400)
        #expect(errorCode(wrong) == "INVALID_LOGIN_CREDENTIALS")
        #expect(wrong.body == unknown.body)
    }

    @Test func refreshRotatesAndAReplayRevokesTheFamily() async throws {
        let up = await post("/v1/accounts:signUp", "{}")
        let first = try #require(field(up, "refreshToken"))
        let refreshed = await post("/v1/token", "grant_type=refresh_token&refresh_token=\(first)", contentType: "application/x-www-form-urlencoded")
        #expect(refreshed.status == 200)
        #expect(field(refreshed, "token_type") == "Bearer")
        #expect(field(refreshed, "user_id") == field(up, "localId"))
        let second = try #require(field(refreshed, "refresh_token"))
        #expect(second != first)
        let json = await post("/securetoken.googleapis.com/v1/token", #"{"grant_type":"refresh_token","refresh_token":"\#(second)"}"#)
        #expect(json.status == 200)
        let third = try #require(field(json, "refresh_token"))
        // Replaying the first token revokes the family, including the current one.
        #expect(errorCode(await post("/v1/token", "grant_type=refresh_token&refresh_token=\(first)", contentType: "application/x-www-form-urlencoded")) == "INVALID_REFRESH_TOKEN")
        #expect(errorCode(await post("/v1/token", #"{"grant_type":"refresh_token","refresh_token":"\#(third)"}"#)) == "INVALID_REFRESH_TOKEN")
        #expect(errorCode(await post("/v1/token", #"{"grant_type":"password"}"#)) == "INVALID_GRANT_TYPE")
        #expect(errorCode(await post("/v1/token", #"{"grant_type":"refresh_token"}"#)) == "MISSING_REFRESH_TOKEN")
    }

    @Test func linkingAnAnonymousAccountKeepsItsUIDAndAPasswordChangeRevokesOldTokens() async throws {
        let anon = await post("/v1/accounts:signUp", "{}")
        let uid = try #require(field(anon, "localId"))
        let anonToken = try #require(field(anon, "idToken"))
        let anonRefresh = try #require(field(anon, "refreshToken"))
        let linked = await post("/v1/accounts:update", #"{"idToken":"\#(anonToken)","email":"link@example.com","password":"secret1","returnSecureToken":true}"#)
        #expect(linked.status == 200)
        #expect(field(linked, "localId") == uid)
        let linkedToken = try #require(field(linked, "idToken"))
        let lookup = await post("/v1/accounts:lookup", #"{"idToken":"\#(linkedToken)"}"#)
        let user = lookup.json?.objectValue?["users"]?.arrayValue?.first?.objectValue
        #expect(user?["email"] == .string("link@example.com"))
        #expect(user?["passwordHash"] == nil)
        #expect(try h.auth.service.accounts.user(uid: uid)?.provider == .password)
        // The password change revoked the anonymous session's tokens.
        #expect(await h.send("GET", "/users/\(uid)/favorites.json", headers: [("Authorization", "Bearer \(anonToken)")]).status == 401)
        #expect(errorCode(await post("/v1/token", #"{"grant_type":"refresh_token","refresh_token":"\#(anonRefresh)"}"#)) == "INVALID_REFRESH_TOKEN")
        #expect(await h.send("GET", "/users/\(uid)/favorites.json", headers: [("Authorization", "Bearer \(linkedToken)")]).status == 200)
        // Signing in with the new credentials gives the same uid.
        let signIn = await post("/v1/accounts:signInWithPassword", #"{"email":"link@example.com","password":"secret1"}"#)
        #expect(field(signIn, "localId") == uid)
    }

    @Test func deleteAndDisableEndTheSession() async throws {
        let up = await post("/v1/accounts:signUp", "{}")
        let uid = try #require(field(up, "localId"))
        let token = try #require(field(up, "idToken"))
        let deleted = await post("/v1/accounts:delete", #"{"idToken":"\#(token)"}"#)
        #expect(field(deleted, "kind") == "identitytoolkit#DeleteAccountResponse")
        #expect(await h.send("GET", "/users/\(uid)/favorites.json", headers: [("Authorization", "Bearer \(token)")]).status == 401)
        #expect(errorCode(await post("/v1/accounts:lookup", #"{"idToken":"\#(token)"}"#)) == "USER_NOT_FOUND")

        let other = await post("/v1/accounts:signUp", "{}")
        let otherUID = try #require(field(other, "localId"))
        let otherToken = try #require(field(other, "idToken"))
        var changes = AccountService.Changes()
        changes.disabled = true
        _ = try h.auth.service.update(uid: otherUID, changes)
        h.auth.authenticator.invalidate(otherUID)
        #expect(await h.send("GET", "/users/\(otherUID)/favorites.json", headers: [("Authorization", "Bearer \(otherToken)")]).status == 401)
    }

    @Test func badTokensAre401() async throws {
        let up = await post("/v1/accounts:signUp", "{}")
        let uid = try #require(field(up, "localId"))
        let token = try #require(field(up, "idToken"))
        let parts = token.split(separator: ".").map(String.init)
        let header = { (json: String) in Base64.encode(Array(json.utf8), alphabet: .url, padding: .none) }
        let publicKey = h.auth.service.keys.signingKey.verifyingKey
        let forged: [String: String] = [
            "tampered payload": parts[0] + "." + header(#"{"sub":"\#(uid)","admin":true}"#) + "." + parts[2],
            "tampered signature": parts[0] + "." + parts[1] + "." + String(parts[2].reversed()),
            "alg none": header(#"{"alg":"none","kid":"\#(publicKey.kid)"}"#) + "." + parts[1] + ".",
            "HS256 with the public key": header(#"{"alg":"HS256","kid":"\#(publicKey.kid)"}"#) + "." + parts[1] + "." + parts[2],
            "unknown kid": header(#"{"alg":"EdDSA","kid":"nope"}"#) + "." + parts[1] + "." + parts[2],
            "garbage": "not-a-token",
        ]
        for (name, bad) in forged {
            let response = await h.send("GET", "/users/\(uid)/favorites.json", headers: [("Authorization", "Bearer \(bad)")])
            #expect(response.status == 401, "\(name)")
        }
        // Expired: a token issued two hours ago.
        let twoHoursAgo = SQLiteTreeStore.systemMilliseconds() / 1000 - 7200
        let claims = IDTokenClaims(projectID: h.auth.service.settings.projectID, uid: uid, issuedAt: twoHoursAgo, signInProvider: "anonymous")
        let old = try TokenSigner(key: h.auth.service.keys.signingKey).sign(claims: try claims.json())
        let expired = await h.send("GET", "/users/\(uid)/favorites.json", headers: [("Authorization", "Bearer \(old)")])
        #expect(expired.status == 401)
        #expect(expired.errorMessage == "Auth token is expired")
    }

    @Test func aCachedVerifiedTokenStillExpires() throws {
        let dir = TemporaryDirectory()
        let store = try SQLiteTreeStore(directory: dir.path)
        defer { store.close() }
        let now = Mutex<Int64>(SQLiteTreeStore.systemMilliseconds())
        let auth = try AuthContext.make(store: store, dataDirectory: dir.path, settings: AuthSettings(),
                                        hasher: RouterHarness.testHasher, clock: { now.withLock { $0 } })
        let session = try auth.service.signUpAnonymously()
        #expect(try auth.authenticator.caller(token: session.idToken).auth.objectValue?["uid"] == JSONValue.string(session.user.uid))
        #expect(try auth.authenticator.caller(token: session.idToken).isAdmin == false)  // served from the cache
        now.withLock { $0 += 3_601_000 }
        #expect(throws: APIError(401, "Auth token is expired")) { try auth.authenticator.caller(token: session.idToken) }
    }

    /// What a connection's identity became (`Authenticator.standing`): good until
    /// its token's expiry, revoked once its user is revoked, disabled or deleted (seen
    /// through the user status cache within `userStatusCacheSeconds`, as REST sees it);
    /// from the caches alone it answers nil when the status would have to be read.
    @Test func aHeldCredentialLapsesAsRESTWouldJudgeItsToken() throws {
        let dir = TemporaryDirectory()
        let store = try SQLiteTreeStore(directory: dir.path)
        defer { store.close() }
        let now = Mutex<Int64>(SQLiteTreeStore.systemMilliseconds())
        var settings = AuthSettings()
        settings.userStatusCacheSeconds = 10
        let auth = try AuthContext.make(store: store, dataDirectory: dir.path, settings: settings,
                                        hasher: RouterHarness.testHasher, clock: { now.withLock { $0 } })
        let authenticator = auth.authenticator
        let session = try auth.service.signUpAnonymously()
        let held = try authenticator.credential(token: session.idToken)
        #expect(authenticator.standing(of: held, cacheOnly: true) == .good)
        #expect(authenticator.standing(of: Authenticator.Credential(caller: .unauthenticated), cacheOnly: true) == .good)
        // Revoked: within the cache bound the old status stands (REST's too); past it, revoked.
        now.withLock { $0 += 1_000 }
        try auth.service.revokeSessions(uid: session.user.uid)
        #expect(authenticator.standing(of: held, cacheOnly: true) == .good)
        now.withLock { $0 += Int64(settings.userStatusCacheSeconds) * 1000 }
        #expect(authenticator.standing(of: held, cacheOnly: true) == nil)  // needs a read
        #expect(authenticator.standing(of: held, cacheOnly: false) == .revoked)
        #expect(throws: APIError(401, "Auth token is revoked")) { try authenticator.credential(token: session.idToken) }
        // Disabled, and deleted.
        for change in ["disable", "delete"] {
            let other = try auth.service.signUpAnonymously()
            let credential = try authenticator.credential(token: other.idToken)
            if change == "disable" {
                var changes = AccountService.Changes()
                changes.disabled = true
                _ = try auth.service.update(uid: other.user.uid, changes)
            } else {
                try auth.service.delete(uid: other.user.uid)
            }
            now.withLock { $0 += Int64(settings.userStatusCacheSeconds) * 1000 }
            #expect(authenticator.standing(of: credential, cacheOnly: false) == .revoked, "\(change)")
        }
        // Expired: at its expiry, whatever the user's status.
        let fresh = try auth.service.signUpAnonymously()
        let expiring = try authenticator.credential(token: fresh.idToken)
        let expiry = try #require(expiring.expiresAt)
        now.withLock { $0 = expiry - 1 }
        #expect(authenticator.standing(of: expiring, cacheOnly: false) == .good)
        now.withLock { $0 = expiry }
        #expect(authenticator.standing(of: expiring, cacheOnly: true) == .expired)
    }

    @Test func signInIsRateLimitedPerAddressWithRetryAfter() async throws {
        var settings = AuthSettings()
        settings.signInAttemptsPerMinute = 3
        // A frozen clock: the four attempts fall in one rate-limit window however slow the machine.
        let frozen = SQLiteTreeStore.systemMilliseconds()
        let limited = try RouterHarness(settings: settings, clock: { frozen })
        var statuses: [Int] = []
        for _ in 0..<4 {
            let request = HTTPRequest(method: "POST", target: "/v1/accounts:signInWithPassword",
                                      body: Array(#"{"email":"x@example.com","password":"whatever"}"#.utf8), remoteAddress: "10.0.0.9")
            let response = await withCheckedContinuation { continuation in
                limited.router.handle(request, responder: HTTPResponder { continuation.resume(returning: $0) })
            }
            statuses.append(response.status)
            if response.status == 429 { #expect(response.headers["Retry-After"] != nil) }
        }
        #expect(statuses == [400, 400, 400, 429])
    }

    @Test func signUpKindsCanBeTurnedOff() async throws {
        var settings = AuthSettings()
        settings.allowAnonymousSignUp = false
        settings.allowEmailSignUp = false
        let closed = try RouterHarness(settings: settings)
        let anon = HTTPRequest(method: "POST", target: "/v1/accounts:signUp", body: Array("{}".utf8))
        let email = HTTPRequest(method: "POST", target: "/v1/accounts:signUp", body: Array(#"{"email":"a@b.co","password":"secret1"}"#.utf8))
        for (request, code) in [(anon, "ADMIN_ONLY_OPERATION"), (email, "OPERATION_NOT_ALLOWED")] {
            let response = await withCheckedContinuation { continuation in
                closed.router.handle(request, responder: HTTPResponder { continuation.resume(returning: $0) })
            }
            #expect(errorCode(response) == code)
        }
    }

    @Test func jwksPublishesTheVerifyingKey() async throws {
        let jwks = await h.send("GET", "/.well-known/jwks.json")
        #expect(jwks.status == 200)
        let keys = try JWKS.keys(from: try #require(jwks.json))
        #expect(keys[h.auth.service.keys.signingKey.verifyingKey.kid] != nil)
        #expect(!jwks.text.contains("\"d\""))  // no private key material
    }

    @Test func aBurstOfSignInsIsBoundedAndDoesNotStallReads() async throws {
        // A real scrypt cost (ln=13, ~20 ms) so the burst outlasts a read; the pool runs two
        // at a time and refuses (429) what does not fit in its backlog.
        let slow = try RouterHarness(hasher: PasswordHasher(parameters: try ScryptParameters(logN: 13, r: 8, p: 1)))
        final class Burst: Sendable {
            let pending = Atomic<Int>(200)
            let statuses = Mutex<[Int]>([])
            let readDone = Mutex<Int?>(nil)
        }
        let burst = Burst()
        await withTaskGroup(of: Void.self) { group in
            for i in 0..<200 {
                group.addTask {
                    let request = HTTPRequest(method: "POST", target: "/v1/accounts:signUp",
                                              body: Array(#"{"email":"burst\#(i)@example.com","password":"secret12"}"#.utf8),
                                              remoteAddress: "10.1.\(i / 250).\(i % 250)")
                    let response = await withCheckedContinuation { continuation in
                        slow.router.handle(request, responder: HTTPResponder { continuation.resume(returning: $0) })
                    }
                    burst.statuses.withLock { $0.append(response.status) }
                    burst.pending.subtract(1, ordering: .relaxed)
                }
            }
            group.addTask {
                let read = await slow.send("GET", "/anything.json")
                #expect(read.status == 200)
                burst.readDone.withLock { $0 = burst.pending.load(ordering: .relaxed) }
            }
        }
        let all = burst.statuses.withLock { $0 }
        #expect(all.count == 200)
        #expect(all.allSatisfy { $0 == 200 || $0 == 429 })
        #expect(all.contains(200))
        #expect((burst.readDone.withLock { $0 } ?? 0) > 0, "the read waited for the whole burst")
        #expect(slow.auth.pool.width == AuthContext.hashingPoolWidth)
    }
}

extension JSONValue {
    var arrayValue: [JSONValue]? {
        if case .array(let items) = self { return items }
        return nil
    }
}

@Suite struct AuthBodyTests {
    @Test func jsonLabelledAsAFormIsReadAsJSON() async throws {
        let h = try RouterHarness()
        // What `curl -d '{...}'` sends: JSON with curl's default form content type.
        let signUp = await h.send("POST", "/v1/accounts:signUp", #"{"email":"ann@example.com","password":"secret1"}"#,
                                  headers: [("Content-Type", "application/x-www-form-urlencoded")])
        #expect(signUp.status == 200)
        guard case .object(let body)? = signUp.json else { Issue.record("no JSON body"); return }
        #expect(body["email"] == .string("ann@example.com"))
        // A real form still works (the token endpoint takes forms).
        let form = await h.send("POST", "/v1/token", "grant_type=refresh_token&refresh_token=nope",
                                headers: [("Content-Type", "application/x-www-form-urlencoded")])
        #expect(form.status == 400 && form.text.contains("INVALID_REFRESH_TOKEN"))
    }
}

/// Two revocations within one second: the token issued between them (one second ahead,
/// after the first) is refused by the second. (A firebase-admin check flaked on this.)
@Suite struct RevocationWithinOneSecondTests {
    @Test func aSecondRevocationInTheSameSecondRefusesTokensIssuedAfterTheFirst() throws {
        let dir = TemporaryDirectory()
        let store = try SQLiteTreeStore(directory: dir.path)
        defer { store.close() }
        let frozen: Int64 = 1_795_560_311_200
        let auth = try AuthContext.make(store: store, dataDirectory: dir.path, settings: AuthSettings(),
                                        hasher: RouterHarness.testHasher, clock: { frozen })
        let first = try auth.service.signUpAnonymously()
        try auth.service.revokeSessions(uid: first.user.uid)
        #expect(throws: AuthError.self) { try auth.service.user(forIDToken: first.idToken) }
        let between = try auth.service.idToken(for: try #require(try auth.service.accounts.user(uid: first.user.uid)), now: frozen)
        #expect(try auth.service.user(forIDToken: between).uid == first.user.uid)
        var changes = AccountService.Changes()
        changes.validSince = frozen / 1000  // what firebase-admin's revoke_refresh_tokens sends
        _ = try auth.service.update(uid: first.user.uid, changes)
        #expect(throws: AuthError.self) { try auth.service.user(forIDToken: between) }
        try auth.service.revokeSessions(uid: first.user.uid)
        let after = try auth.service.idToken(for: try #require(try auth.service.accounts.user(uid: first.user.uid)), now: frozen)
        #expect(try auth.service.user(forIDToken: after).uid == first.user.uid)
    }

    /// The revoking client's clock may be behind or ahead of ours; either way a
    /// token issued at or before the revocation (in its second, too) is refused after it,
    /// and one issued after it is accepted.
    @Test(arguments: [-30, -1, 0, 1, Int(TokenVerifier.defaultLeeway)])
    func aRevocationRefusesEarlierTokensWhicheverClockTheCallerUsed(skewSeconds: Int) throws {
        let dir = TemporaryDirectory()
        let store = try SQLiteTreeStore(directory: dir.path)
        defer { store.close() }
        let frozen: Int64 = 1_795_560_311_999  // the last millisecond of a second
        let auth = try AuthContext.make(store: store, dataDirectory: dir.path, settings: AuthSettings(),
                                        hasher: RouterHarness.testHasher, clock: { frozen })
        let session = try auth.service.signUpAnonymously()
        let sameSecond = try auth.service.idToken(for: session.user, now: frozen)
        var changes = AccountService.Changes()
        changes.validSince = frozen / 1000 + Int64(skewSeconds)
        _ = try auth.service.update(uid: session.user.uid, changes)
        #expect(throws: AuthError.tokenExpired) { try auth.service.user(forIDToken: session.idToken) }
        #expect(throws: AuthError.tokenExpired) { try auth.service.user(forIDToken: sameSecond) }
        #expect(throws: AuthError.invalidRefreshToken) { try auth.service.refresh(session.refreshToken) }
        let user = try #require(try auth.service.accounts.user(uid: session.user.uid))
        let after = try auth.service.idToken(for: user, now: frozen)
        #expect(try auth.service.user(forIDToken: after).uid == session.user.uid)
    }
}

/// Refresh retries and recent sign-ins at the service, on an injected clock: a lost refresh
/// answer is retried without signing the user out, within
/// `AuthSettings.refreshRetryWindowSeconds`; `auth_time` survives refreshes; a password or
/// email change needs a recent sign-in.
@Suite struct RefreshRetryAndRecentSignInTests {
    final class Clock: Sendable {
        let ms = Atomic<Int64>(1_795_560_000_000)
        func advance(seconds: Int64) { ms.add(seconds * 1000, ordering: .relaxed) }
        var now: Int64 { ms.load(ordering: .relaxed) }
    }

    static func make(_ clock: Clock, settings: AuthSettings = AuthSettings()) throws -> (AuthContext, SQLiteTreeStore, TemporaryDirectory) {
        let dir = TemporaryDirectory()
        let store = try SQLiteTreeStore(directory: dir.path)
        let auth = try AuthContext.make(store: store, dataDirectory: dir.path, settings: settings,
                                        hasher: RouterHarness.testHasher, clock: { clock.now })
        return (auth, store, dir)
    }

    static func claim(_ auth: AuthContext, _ token: String, _ name: JSONKey) throws -> Int64? {
        if case .int(let value)? = try auth.service.verify(token).objectValue?[name] { return value }
        return nil
    }

    @Test func aRetryWithinTheWindowGetsTheSamePairAndPastItIsAReplay() throws {
        let clock = Clock()
        let (auth, store, dir) = try Self.make(clock)
        defer { store.close(); withExtendedLifetime(dir) {} }
        let session = try auth.service.signUpAnonymously()
        clock.advance(seconds: 10)
        let rotated = try auth.service.refresh(session.refreshToken)
        // The answer was lost; the client retries with the token it still has.
        clock.advance(seconds: AuthSettings.refreshRetryWindowSeconds)  // the window's last second
        let retried = try auth.service.refresh(session.refreshToken)
        #expect(retried.refreshToken == rotated.refreshToken)
        #expect(retried.idToken == rotated.idToken)
        // The pair works: its refresh token rotates normally.
        let next = try auth.service.refresh(retried.refreshToken)
        #expect(next.refreshToken != rotated.refreshToken)
        // Now the old token is a replay: refused, and the family is revoked.
        #expect(throws: AuthError.invalidRefreshToken) { try auth.service.refresh(session.refreshToken) }
        #expect(throws: AuthError.invalidRefreshToken) { try auth.service.refresh(next.refreshToken) }

        // Past the window, a used token is a replay even when its successor is unused.
        let other = try auth.service.signUpAnonymously()
        let otherRotated = try auth.service.refresh(other.refreshToken)
        clock.advance(seconds: AuthSettings.refreshRetryWindowSeconds + 1)
        #expect(throws: AuthError.invalidRefreshToken) { try auth.service.refresh(other.refreshToken) }
        #expect(throws: AuthError.invalidRefreshToken) { try auth.service.refresh(otherRotated.refreshToken) }
    }

    @Test func theSealedSuccessorOpensOnlyWithItsToken() throws {
        let token = try SecretToken.generate(), next = try SecretToken.generate(), stranger = try SecretToken.generate()
        let sealed = try #require(RefreshSeal.seal(next, under: token))
        #expect(RefreshSeal.open(sealed, with: token) == next)
        #expect(RefreshSeal.open(sealed, with: stranger) != next)
        #expect(!sealed.contains(SecretToken.hash(next)) && sealed != SecretToken.hash(token))
        #expect(RefreshSeal.seal(next, under: "short") == nil)
        #expect(RefreshSeal.open("zz", with: token) == nil)
    }

    @Test func authTimeSurvivesRefreshesAndSensitiveChangesNeedARecentSignIn() throws {
        let clock = Clock()
        var settings = AuthSettings()
        settings.recentSignInSeconds = 300
        let (auth, store, dir) = try Self.make(clock, settings: settings)
        defer { store.close(); withExtendedLifetime(dir) {} }
        let session = try auth.service.signUp(email: "r@example.com", password: "secret1")
        let signedIn = try #require(try Self.claim(auth, session.idToken, "auth_time"))
        clock.advance(seconds: 301)
        let refreshed = try auth.service.refresh(session.refreshToken)
        #expect(try Self.claim(auth, refreshed.idToken, "auth_time") == signedIn)
        #expect(try Self.claim(auth, refreshed.idToken, "iat") == signedIn + 301)

        let (user, authTime) = try auth.service.signedIn(forIDToken: refreshed.idToken)
        var password = AccountService.Changes()
        password.password = "secret2"
        #expect(throws: AuthError.credentialTooOld) { try auth.service.requireRecentSignIn(user, authTime: authTime, for: password) }
        var email = AccountService.Changes()
        email.email = "new@example.com"
        #expect(throws: AuthError.credentialTooOld) { try auth.service.requireRecentSignIn(user, authTime: authTime, for: email) }
        var name = AccountService.Changes()
        name.displayName = "R"
        try auth.service.requireRecentSignIn(user, authTime: authTime, for: name)  // not sensitive
        var sameEmail = AccountService.Changes()
        sameEmail.email = "R@example.com"
        try auth.service.requireRecentSignIn(user, authTime: authTime, for: sameEmail)  // no change

        // Signing in again makes it recent; 300 s later it still is, 301 s later not.
        let again = try auth.service.signIn(email: "r@example.com", password: "secret1")
        clock.advance(seconds: 300)
        let (fresh, freshTime) = try auth.service.signedIn(forIDToken: again.idToken)
        try auth.service.requireRecentSignIn(fresh, authTime: freshTime, for: password)
        clock.advance(seconds: 1)
        #expect(throws: AuthError.credentialTooOld) { try auth.service.requireRecentSignIn(fresh, authTime: freshTime, for: password) }

        // An anonymous account has no password to sign in again with: linking is allowed.
        let anonymous = try auth.service.signUpAnonymously()
        clock.advance(seconds: 3600)
        let (anon, anonTime) = try auth.service.signedIn(forIDToken: try auth.service.refresh(anonymous.refreshToken).idToken)
        var link = AccountService.Changes()
        link.email = "link@example.com"
        link.password = "secret1"
        try auth.service.requireRecentSignIn(anon, authTime: anonTime, for: link)
    }
}

extension AccountsTests {
    /// A recent sign-in over HTTP: `accounts:update` answers
    /// `CREDENTIAL_TOO_OLD_LOGIN_AGAIN` for a password change with an old sign-in, and a
    /// display-name change still works.
    @Test func aPasswordChangeWithAnOldSignInIsRefused() async throws {
        let clock = RefreshRetryAndRecentSignInTests.Clock()
        let harness = try RouterHarness(clock: { clock.now })
        let session = try harness.auth.service.signUp(email: "o@example.com", password: "secret1")
        clock.advance(seconds: AuthSettings.defaultRecentSignInSeconds + 1)
        let refused = await harness.send("POST", "/v1/accounts:update", #"{"idToken":"\#(session.idToken)","password":"secret2","returnSecureToken":true}"#)
        #expect(refused.status == 400)
        #expect(refused.json?.objectValue?["error"]?.objectValue?["message"] == .string("CREDENTIAL_TOO_OLD_LOGIN_AGAIN"))
        #expect(await harness.send("POST", "/v1/accounts:update", #"{"idToken":"\#(session.idToken)","displayName":"O"}"#).status == 200)
        // After signing in again the change goes through.
        let again = try harness.auth.service.signIn(email: "o@example.com", password: "secret1")
        #expect(await harness.send("POST", "/v1/accounts:update", #"{"idToken":"\#(again.idToken)","password":"secret2"}"#).status == 200)
    }
}

/// The legacy v3 routes reach the v1 handlers with the same answers,
/// under both prefixes; no auth-looking path is ever stored, even under open rules.
@Suite struct LegacyRoutesTests {
    let h: RouterHarness
    init() throws { h = try RouterHarness() }  // open rules: anything not routed would be stored

    func post(_ path: String, _ body: String) async -> HTTPResponse {
        await h.send("POST", path, body, headers: [("Content-Type", "application/json")])
    }

    @Test(arguments: ["/identitytoolkit/v3/relyingparty/", "/www.googleapis.com/identitytoolkit/v3/relyingparty/"])
    func theV3MethodsAnswerAsV1(prefix: String) async throws {
        let email = "v3-\(prefix.count)@example.com"
        let up = await post(prefix + "signupNewUser?key=x", #"{"email":"\#(email)","password":"secret1","returnSecureToken":true}"#)
        #expect(up.status == 200)
        #expect(up.json?.objectValue?["kind"] == "identitytoolkit#SignupNewUserResponse")
        let signIn = await post(prefix + "verifyPassword", #"{"email":"\#(email)","password":"secret1","returnSecureToken":true}"#)
        #expect(signIn.json?.objectValue?["kind"] == "identitytoolkit#VerifyPasswordResponse")
        let token = try #require(signIn.json?.objectValue?["idToken"]?.stringValue)
        let info = await post(prefix + "getAccountInfo", #"{"idToken":"\#(token)"}"#)
        #expect(info.json?.objectValue?["users"]?.arrayValue?.first?.objectValue?["email"] == .string(email))
        let set = await post(prefix + "setAccountInfo", #"{"idToken":"\#(token)","displayName":"Vee"}"#)
        #expect(set.json?.objectValue?["displayName"] == "Vee")
        let wrong = await post(prefix + "verifyPassword", #"{"email":"\#(email)","password":"nope-nope"}"#)
        #expect(wrong.json?.objectValue?["error"]?.objectValue?["message"] == "INVALID_LOGIN_CREDENTIALS")
        let gone = await post(prefix + "deleteAccount", #"{"idToken":"\#(token)"}"#)
        #expect(gone.json?.objectValue?["kind"] == "identitytoolkit#DeleteAccountResponse")
        // An unknown v3 method is a clear 404, not data.
        let unknown = await post(prefix + "createAuthUri", #"{"identifier":"x@example.com","password":"secret"}"#)
        #expect(unknown.status == 404)
        #expect(unknown.json?.objectValue?["error"] != nil)
    }

    @Test(arguments: ["/identitytoolkit/v3/relyingparty/madeUp.json", "/www.googleapis.com/anything.json", "/v1/whatever.json",
                      "/identitytoolkit.googleapis.com/v2/x.json", "/securetoken.googleapis.com/v9/token.json"])
    func authLookingPathsAreNeverStored(path: String) async throws {
        let put = await h.send("PUT", path, #"{"password":"hunter2"}"#)
        #expect(put.status == 404)
        #expect(try h.store.readSync { try $0.exists(at: .root) } == false)
    }
}

/// Email action codes at the service, on an injected clock: codes expire, are single use,
/// are stored hashed, and belong to the address they were sent to.
@Suite struct ActionCodeTests {
    @Test func codesExpireAreSingleUseAndStoredHashed() throws {
        let clock = RefreshRetryAndRecentSignInTests.Clock()
        let (auth, store, dir) = try RefreshRetryAndRecentSignInTests.make(clock)
        defer { store.close(); withExtendedLifetime(dir) {} }
        let service = auth.service
        let session = try service.signUp(email: "c@example.com", password: "secret1")
        let code = try service.createActionCode(.passwordReset, for: session.user)
        #expect(SecretToken.isWellFormed(code))
        #expect(try store.accounts.actionCode(hash: code, kind: "PASSWORD_RESET", at: clock.now, consume: false) == .invalid)  // not stored as is
        // Valid until its lifetime is over.
        clock.advance(seconds: AccountService.ActionKind.passwordReset.lifetimeSeconds - 1)
        #expect(try service.resetPassword(code: code, newPassword: nil) == "c@example.com")
        clock.advance(seconds: 1)
        #expect(throws: AuthError("EXPIRED_OOB_CODE")) { try service.resetPassword(code: code, newPassword: "secret2") }
        // A fresh one works once; a verification code is no reset code.
        let fresh = try service.createActionCode(.passwordReset, for: session.user)
        let verify = try service.createActionCode(.verifyEmail, for: session.user)
        #expect(throws: AuthError("INVALID_OOB_CODE")) { try service.resetPassword(code: verify, newPassword: "secret2") }
        #expect(try service.resetPassword(code: fresh, newPassword: "secret2") == "c@example.com")
        #expect(throws: AuthError("INVALID_OOB_CODE")) { try service.resetPassword(code: fresh, newPassword: "secret3") }
        #expect(throws: AuthError.weakPassword(minimum: 6)) { try service.resetPassword(code: fresh, newPassword: "x") }
        // A verification sent to an address the account no longer has verifies nothing.
        var changes = AccountService.Changes()
        changes.email = "moved@example.com"
        _ = try service.update(uid: session.user.uid, changes)
        #expect(throws: AuthError("INVALID_OOB_CODE")) { try service.verifyEmail(code: verify) }
        #expect(try store.accounts.user(uid: session.user.uid)?.emailVerified == false)
    }
}

/// Unsigned custom tokens (firebase-admin's in emulator mode) are accepted only
/// in the emulator mode and only from loopback.
@Suite struct UnsignedCustomTokenTests {
    static func unsigned(uid: String) -> String {
        let now = SQLiteTreeStore.systemMilliseconds() / 1000
        let claims: JSONValue = ["iss": "firebase-auth-emulator@example.com", "sub": "firebase-auth-emulator@example.com",
                                 "aud": .string(CustomTokenVerifier.audience), "uid": .string(uid), "iat": .int(now), "exp": .int(now + 3600)]
        return Base64.encode(JSONWriter.write(["alg": "none", "typ": "JWT"]), alphabet: .url, padding: .none) + "." + Base64.encode(JSONWriter.write(claims), alphabet: .url, padding: .none) + "."
    }

    static func signIn(_ h: RouterHarness, from address: String) async -> HTTPResponse {
        let request = HTTPRequest(method: "POST", target: "/identitytoolkit.googleapis.com/v1/accounts:signInWithCustomToken",
                                  body: Array(#"{"token":"\#(unsigned(uid: "emu"))","returnSecureToken":true}"#.utf8), remoteAddress: address)
        return await withCheckedContinuation { continuation in
            h.router.handle(request, responder: HTTPResponder { continuation.resume(returning: $0) })
        }
    }

    @Test func onlyInEmulatorModeAndOnlyFromLoopback() async throws {
        var emulator = AuthSettings()
        emulator.acceptEmulatorOwner = true
        let h = try RouterHarness(settings: emulator)
        #expect(await Self.signIn(h, from: "127.0.0.1").status == 200)
        #expect(await Self.signIn(h, from: "::1").status == 200)
        let remote = await Self.signIn(h, from: "203.0.113.5")
        #expect(remote.status == 400)
        #expect(remote.json?.objectValue?["error"]?.objectValue?["message"]?.stringValue?.hasPrefix("INVALID_CUSTOM_TOKEN : unsigned tokens") == true)
        let plain = try RouterHarness()
        #expect(await Self.signIn(plain, from: "127.0.0.1").status == 400)
    }
}
