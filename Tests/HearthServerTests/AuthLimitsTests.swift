import HearthAuth
import HearthHTTP
import HearthJSON
import HearthRules
import HearthSQLite
import HearthStore
import HearthTesting
import Synchronization
import Testing
@testable import HearthServer
import HearthAccounts

/// Every account-side limit crossed.
@Suite struct AuthLimitsTests {
    @Test func rateLimiterForgetsKeysPastItsCapAndStaysBounded() {
        let now = Mutex<Int64>(1000)
        let limiter = RateLimiter(limit: 1, windowSeconds: 60, maxTrackedKeys: 3, clock: { now.withLock { $0 } })
        #expect(limiter.attempt("a") == nil)
        #expect(limiter.attempt("a") == 60)  // over the limit: retry when the window ends
        now.withLock { $0 += 10 }
        #expect(limiter.attempt("a") == 50)
        #expect(limiter.attempt("b") == nil)
        #expect(limiter.attempt("c") == nil)
        #expect(limiter.trackedKeys == 3)
        #expect(limiter.attempt("d") == nil)  // the cap is crossed: windows start over
        #expect(limiter.trackedKeys <= 3)
        now.withLock { $0 += 60 }
        #expect(limiter.attempt("a") == nil)  // a new window
    }

    @Test func authenticatorCachesStayWithinTheirCaps() throws {
        let dir = TemporaryDirectory()
        let store = try SQLiteTreeStore(directory: dir.path)
        defer { store.close() }
        let auth = try AuthContext.make(store: store, dataDirectory: dir.path, settings: AuthSettings(), hasher: RouterHarness.testHasher)
        let authenticator = Authenticator(service: auth.service, maxVerifiedTokens: 2, maxCachedUsers: 2)
        var sessions: [Session] = []
        for _ in 0..<5 { sessions.append(try auth.service.signUpAnonymously()) }
        for session in sessions + sessions {
            let caller = try authenticator.caller(token: session.idToken)
            #expect(caller.auth.objectValue?["uid"] == JSONValue.string(session.user.uid))
        }
        let sizes = authenticator.cacheSizes
        #expect(sizes.tokens <= 2 && sizes.users <= 2)
    }

    @Test func oversizedAccountRequestBodiesAreRefused() async throws {
        let h = try RouterHarness()
        let big = #"{"email":"a@b.co","password":""# + String(repeating: "x", count: AuthRequestBody.maxBytes) + #""}"#
        let response = await withCheckedContinuation { continuation in
            h.router.handle(HTTPRequest(method: "POST", target: "/v1/accounts:signUp", body: Array(big.utf8)),
                            responder: HTTPResponder { continuation.resume(returning: $0) })
        }
        #expect(response.status == 400)
        #expect(response.text.contains("INVALID_JSON_PAYLOAD : body too large"))
    }

    @Test func passwordsOverTheCapAreRefused() throws {
        let dir = TemporaryDirectory()
        let store = try SQLiteTreeStore(directory: dir.path)
        defer { store.close() }
        let auth = try AuthContext.make(store: store, dataDirectory: dir.path, settings: AuthSettings(), hasher: RouterHarness.testHasher)
        let longest = String(repeating: "p", count: AuthSettings.maximumPasswordLength)
        _ = try auth.service.signUp(email: "long@example.com", password: longest)
        #expect(throws: AuthError("INVALID_PASSWORD", detail: "too long")) {
            try auth.service.signUp(email: "longer@example.com", password: longest + "p")
        }
    }

    @Test func rulesFilesOverTheCapAreRefused() throws {
        let dir = TemporaryDirectory()
        let path = dir.path + "/big.json"
        let padding = String(repeating: " ", count: RulesLoader.maxRulesFileBytes)
        try (#"{"rules": {".read": true}}"# + padding).write(toFile: path, atomically: true, encoding: .utf8)
        #expect(throws: RulesLoader.LoadError.self) { try RulesLoader.load(path) }
        let fits = dir.path + "/fits.json"
        try (#"{"rules": {".read": true}}"# + padding.dropFirst(64)).write(toFile: fits, atomically: true, encoding: .utf8)
        _ = try RulesLoader.load(fits)
    }
}
