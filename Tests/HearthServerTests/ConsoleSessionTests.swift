import HearthAuth
import HearthHTTP
import HearthJSON
import HearthStore
import Synchronization
import Testing
@testable import HearthServer
import HearthAccounts

/// The admin console's foundation, at the router: administrators of
/// their own, cookie sessions with CSRF tokens, idle and absolute expiry on an injected
/// clock, sign-out on the server, the security headers, and the console switch.
@Suite struct ConsoleSessionTests {
    final class Clock: Sendable {
        let ms = Atomic<Int64>(1_795_560_000_000)
        var now: Int64 { ms.load(ordering: .relaxed) }
        func advance(seconds: Int64) { ms.add(seconds * 1000, ordering: .relaxed) }
    }

    let clock = Clock()
    let h: RouterHarness

    init() throws {
        let clock = self.clock
        var settings = AuthSettings()
        settings.signInAttemptsPerMinute = 1000
        h = try RouterHarness(settings: settings, clock: { clock.now }, console: true)
        try h.router.context.console!.add(email: "Root@Example.com", password: "correct horse battery")
    }

    func call(_ method: String, _ path: String, _ body: String? = nil, cookie: String? = nil, csrf: String? = nil,
              headers extra: [(String, String)] = [], proto: String? = nil) async -> HTTPResponse {
        var headers = extra
        if body != nil && !extra.contains(where: { $0.0 == "Content-Type" }) { headers.append(("Content-Type", "application/json")) }
        if let cookie { headers.append(("Cookie", "theme=dark; \(ConsoleRoute.cookieName)=\(cookie)")) }
        if let csrf { headers.append(("X-CSRF-Token", csrf)) }
        var request = HTTPRequest(method: method, target: path, headers: HTTPHeaders(headers.map { (name: $0.0, value: $0.1) }),
                                  body: body.map { Array($0.utf8) } ?? [], remoteAddress: "127.0.0.1")
        request.forwardedProto = proto
        return await withCheckedContinuation { continuation in
            h.router.handle(request, responder: HTTPResponder { continuation.resume(returning: $0) })
        }
    }

    func signIn(proto: String? = nil) async throws -> (cookie: String, csrf: String, response: HTTPResponse) {
        let response = await call("POST", "/console/api/session", #"{"email":"root@example.com","password":"correct horse battery"}"#, proto: proto)
        #expect(response.status == 200, "\(response.text)")
        let setCookie = try #require(response.headers["Set-Cookie"])
        let value = try #require(setCookie.split(separator: ";").first?.split(separator: "=", maxSplits: 1).last.map(String.init))
        let csrf = try #require(response.json?.objectValue?["csrf"]?.stringValue)
        return (value, csrf, response)
    }

    static func error(_ response: HTTPResponse) -> String? { response.json?.objectValue?["error"]?.stringValue }

    @Test func theFilesComeWithTheSecurityHeaders() async throws {
        let page = await call("GET", "/console/")
        #expect(page.status == 200 && page.headers["Content-Type"] == "text/html; charset=utf-8")
        #expect(page.text.contains(#"<script type="module" src="app.js"></script>"#))
        #expect(!page.text.contains("<script>") && !page.text.contains("style="))  // nothing inline for the CSP to refuse
        for response in [page, await call("GET", "/console/app.js"), await call("GET", "/console/nope.js"), await call("GET", "/console/api/session")] {
            #expect(response.headers["Content-Security-Policy"]?.contains("script-src 'self'") == true)
            #expect(response.headers["Content-Security-Policy"]?.contains("unsafe-inline") == false)
            #expect(response.headers["X-Frame-Options"] == "DENY")
            #expect(response.headers["X-Content-Type-Options"] == "nosniff")
        }
        #expect(await call("GET", "/console/app.js").headers["Content-Type"] == "text/javascript; charset=utf-8")
        #expect(await call("GET", "/console/nope.js").status == 404)
        let bare = await call("GET", "/console")
        #expect(bare.status == 308 && bare.headers["Location"] == "/console/")
        #expect(await call("POST", "/console/index.html", "{}").status == 405)
    }

    @Test func signInGivesAStrictCookieAndTheSessionKnowsItsAdmin() async throws {
        let (cookie, csrf, response) = try await signIn()
        let setCookie = try #require(response.headers["Set-Cookie"])
        for attribute in ["HttpOnly", "SameSite=Strict", "Path=/console", "Max-Age=\(ConsoleAccounts.absoluteSeconds)"] {
            #expect(setCookie.contains(attribute), "\(setCookie)")
        }
        #expect(!setCookie.contains("Secure"))  // plain HTTP, no TLS proxy
        // Over TLS (through a trusted proxy): a `__Host-` cookie, which a browser keeps only
        // with `Secure`, `Path=/` and no `Domain`; the session is found under that name.
        let tls = try await signIn(proto: "https")
        let secureCookie = try #require(tls.response.headers["Set-Cookie"])
        #expect(secureCookie.hasPrefix(ConsoleRoute.secureCookieName + "=") && secureCookie.contains("; Path=/;")
                && secureCookie.hasSuffix("; Secure") && !secureCookie.contains("Domain"), "\(secureCookie)")
        let underHostName = await call("GET", "/console/api/session", headers: [("Cookie", "\(ConsoleRoute.secureCookieName)=\(tls.cookie)")])
        #expect(underHostName.json?.objectValue?["csrf"] == .string(tls.csrf))
        let session = await call("GET", "/console/api/session", cookie: cookie)
        #expect(session.json?.objectValue?["email"] == "root@example.com")
        #expect(session.json?.objectValue?["csrf"] == .string(csrf))
        #expect(Self.error(await call("GET", "/console/api/session")) == "not signed in")
        #expect(await call("GET", "/console/api/session", cookie: "forged").status == 401)
        // The cookie's token is not what the database keeps.
        #expect(try h.store.console.session(hash: cookie) == nil)
    }

    @Test func wrongPasswordsAndForeignSignInsAreRefused() async throws {
        let wrong = await call("POST", "/console/api/session", #"{"email":"root@example.com","password":"wrong horse battery"}"#)
        #expect(wrong.status == 400 && Self.error(wrong) == "wrong email or password" && wrong.headers["Set-Cookie"] == nil)
        let unknown = await call("POST", "/console/api/session", #"{"email":"nobody@example.com","password":"correct horse battery"}"#)
        #expect(Self.error(unknown) == "wrong email or password")
        // An app user is no administrator.
        _ = try h.auth.service.signUp(email: "user@example.com", password: "correct horse battery")
        #expect(await call("POST", "/console/api/session", #"{"email":"user@example.com","password":"correct horse battery"}"#).status == 400)
        // A form post from another site cannot sign in (no JSON), nor a JSON one with a foreign Origin.
        let form = await call("POST", "/console/api/session", "email=root%40example.com", headers: [("Content-Type", "application/x-www-form-urlencoded")])
        #expect(form.status == 415)
        let foreign = await call("POST", "/console/api/session", #"{"email":"root@example.com","password":"correct horse battery"}"#,
                                 headers: [("Origin", "https://evil.example"), ("Host", "hearth.example.com")])
        #expect(foreign.status == 403)
        let same = await call("POST", "/console/api/session", #"{"email":"root@example.com","password":"correct horse battery"}"#,
                              headers: [("Origin", "https://hearth.example.com"), ("Host", "hearth.example.com")])
        #expect(same.status == 200)
    }

    @Test func stateChangesNeedTheCSRFTokenAndSignOutEndsTheSessionOnTheServer() async throws {
        let (cookie, csrf, _) = try await signIn()
        #expect(Self.error(await call("DELETE", "/console/api/session", cookie: cookie)) == "missing or wrong CSRF token")
        #expect(await call("DELETE", "/console/api/session", cookie: cookie, csrf: "wrong").status == 403)
        #expect(await call("GET", "/console/api/session", cookie: cookie).status == 200)  // still signed in
        let out = await call("DELETE", "/console/api/session", cookie: cookie, csrf: csrf)
        #expect(out.status == 200 && out.headers["Set-Cookie"]?.contains("Max-Age=0") == true)
        // The old cookie, replayed, is refused: the server forgot the session.
        #expect(await call("GET", "/console/api/session", cookie: cookie).status == 401)
    }

    /// A page on another port of this host (cookies know no ports) set a cookie of the
    /// session's name with `Path=/console/api`: the browser sends it before the session's.
    /// Every cookie of the name is tried; only a live session's token lets anyone in.
    @Test func aCookieOfTheSameNameSetElsewhereDoesNotShadowTheSession() async throws {
        let (cookie, csrf, _) = try await signIn()
        let name = ConsoleRoute.cookieName
        let shadowed = "\(name)=\(try SecretToken.generate()); \(name)=not-a-token; theme=dark; \(name)=\(cookie)"
        let seen = await call("GET", "/console/api/session", headers: [("Cookie", shadowed)])
        #expect(seen.status == 200 && seen.json?.objectValue?["csrf"] == .string(csrf), "\(seen.text)")
        // In two Cookie fields too, and for a change with the CSRF token.
        let split = [("Cookie", "\(name)=\(try SecretToken.generate())"), ("Cookie", "\(name)=\(cookie)")]
        #expect(await call("PUT", "/console/api/rest/a.json", "1", headers: split + [("X-CSRF-Token", csrf)]).status == 200)
        // Cookies that are no live session still let nobody in, wherever they stand.
        let forged = "\(name)=\(try SecretToken.generate()); \(ConsoleRoute.secureCookieName)=\(try SecretToken.generate())"
        #expect(await call("GET", "/console/api/session", headers: [("Cookie", forged)]).status == 401)
        // Signing out ends the live session among them.
        #expect(await call("DELETE", "/console/api/session", headers: [("Cookie", shadowed), ("X-CSRF-Token", csrf)]).status == 200)
        #expect(await call("GET", "/console/api/session", cookie: cookie).status == 401)
    }

    /// The REST API under the console answers like every console file and API: the
    /// security headers once each, and no `Access-Control-Allow-Origin: *` (which the
    /// same REST API outside the console sends, as Firebase does).
    @Test func theConsolesRESTAnswersCarryTheSecurityHeadersAndNoCORSGrant() async throws {
        let (cookie, csrf, _) = try await signIn()
        #expect(await call("GET", "/a.json").headers["Access-Control-Allow-Origin"] == "*")
        let answers = [
            ("write", await call("PUT", "/console/api/rest/a.json", "1", cookie: cookie, csrf: csrf), 200),
            ("read", await call("GET", "/console/api/rest/a.json", cookie: cookie), 200),
            ("silent", await call("GET", "/console/api/rest/a.json?print=silent", cookie: cookie), 204),
            ("refused", await call("GET", "/console/api/rest/a.json?orderBy=1", cookie: cookie), 400),
            ("not signed in", await call("GET", "/console/api/rest/a.json"), 401),
        ]
        for (what, response, status) in answers {
            #expect(response.status == status, "\(what): \(response.status) \(response.text)")
            for (name, value) in ConsoleRoute.securityHeaders {
                #expect(response.headers.values(name) == [value], "\(what): \(name)")
            }
            #expect(!response.headers.contains { $0.name.lowercased().hasPrefix("access-control-") }, "\(what): \(Array(response.headers))")
        }
    }

    @Test func sessionsExpireWhenIdleAndAfterTheirAbsoluteLifetime() async throws {
        let (idle, _, _) = try await signIn()
        clock.advance(seconds: ConsoleAccounts.defaultIdleSeconds - 1)
        #expect(await call("GET", "/console/api/session", cookie: idle).status == 200)  // used: idle time starts again
        clock.advance(seconds: ConsoleAccounts.defaultIdleSeconds - 1)
        #expect(await call("GET", "/console/api/session", cookie: idle).status == 200)
        clock.advance(seconds: ConsoleAccounts.defaultIdleSeconds)
        #expect(await call("GET", "/console/api/session", cookie: idle).status == 401)

        let (busy, _, _) = try await signIn()
        var used: Int64 = 0
        while used + ConsoleAccounts.defaultIdleSeconds / 2 < ConsoleAccounts.absoluteSeconds {
            clock.advance(seconds: ConsoleAccounts.defaultIdleSeconds / 2)
            used += ConsoleAccounts.defaultIdleSeconds / 2
            #expect(await call("GET", "/console/api/session", cookie: busy).status == 200)
        }
        clock.advance(seconds: ConsoleAccounts.absoluteSeconds - used)
        #expect(await call("GET", "/console/api/session", cookie: busy).status == 401)  // in use, but 12 h old
    }

    @Test func sessionsNeverPresentedAgainAreDroppedAtTheNextSignIn() async throws {
        let (abandoned, _, _) = try await signIn()
        clock.advance(seconds: ConsoleAccounts.defaultIdleSeconds)
        _ = try await signIn()
        #expect(try h.store.console.session(hash: SecretToken.hash(abandoned)) == nil)
    }

    /// `consoleIdleSeconds`: a short idle limit still lets a session in use live on (its
    /// last use is written at least four times per idle period); below the minimum it is
    /// raised to it.
    @Test func aConfiguredIdleLimit() async throws {
        let accounts = ConsoleAccounts(store: h.store.console, hasher: RouterHarness.testHasher, idleSeconds: 8, clock: { self.clock.now })
        try accounts.add(email: "short@example.com", password: "a long enough pw")
        let session = try accounts.signIn(email: "short@example.com", password: "a long enough pw")
        for _ in 0..<5 {
            clock.advance(seconds: 3)
            #expect(try accounts.session(token: session.token) != nil)  // used every 3 s: 15 s in all
        }
        clock.advance(seconds: 8)
        #expect(try accounts.session(token: session.token) == nil)
        #expect(ConsoleAccounts(store: h.store.console, hasher: RouterHarness.testHasher, idleSeconds: 1, clock: { 0 }).idleSeconds
                == ConsoleAccounts.minimumIdleSeconds)
    }

    @Test func aNewPasswordOrRemovalEndsTheAdminsSessions() async throws {
        let (first, _, _) = try await signIn()
        try h.router.context.console!.setPassword(email: "root@example.com", password: "a new long password")
        #expect(await call("GET", "/console/api/session", cookie: first).status == 401)
        let again = await call("POST", "/console/api/session", #"{"email":"root@example.com","password":"a new long password"}"#)
        let cookie = try #require(again.headers["Set-Cookie"]?.split(separator: ";").first?.split(separator: "=", maxSplits: 1).last.map(String.init))
        try h.router.context.console!.remove(email: "root@example.com")
        #expect(await call("GET", "/console/api/session", cookie: cookie).status == 401)
        #expect(throws: ConsoleAccounts.Failure.weakPassword(ConsoleAccounts.defaultMinimumPasswordLength)) { try h.router.context.console!.add(email: "b@example.com", password: "short") }
        #expect(throws: ConsoleAccounts.Failure.invalidEmail) { try h.router.context.console!.add(email: "nope", password: "long enough pw") }
        try h.router.context.console!.add(email: "b@example.com", password: "long enough pw")
        #expect(throws: ConsoleAccounts.Failure.exists) { try h.router.context.console!.add(email: "B@example.com", password: "long enough pw") }
    }

    @Test func signInIsThrottledLikeUsers() async throws {
        var settings = AuthSettings()
        settings.signInAttemptsPerMinute = 2
        let frozen = clock.now
        let limited = try RouterHarness(settings: settings, clock: { frozen }, console: true)
        var statuses: [Int] = []
        for _ in 0..<3 {
            let request = HTTPRequest(method: "POST", target: "/console/api/session",
                                      headers: HTTPHeaders([(name: "Content-Type", value: "application/json")]),
                                      body: Array(#"{"email":"x@example.com","password":"whatever pw"}"#.utf8), remoteAddress: "10.1.1.1")
            let response = await withCheckedContinuation { continuation in
                limited.router.handle(request, responder: HTTPResponder { continuation.resume(returning: $0) })
            }
            statuses.append(response.status)
            if response.status == 429 { #expect(response.headers["Retry-After"] != nil) }
        }
        #expect(statuses == [400, 400, 429])
    }

    @Test func theConsoleSwitch() async throws {
        var configuration = HearthConfiguration()
        #expect(configuration.consoleEnabled)  // auto, no proxies
        configuration.trustedProxies = ["10.0.0.1"]
        #expect(!configuration.consoleEnabled)  // auto behind a proxy: off
        configuration.console = "on"
        #expect(configuration.consoleEnabled)
        configuration.console = "off"
        configuration.trustedProxies = []
        #expect(!configuration.consoleEnabled)
        // Off, `/console/` answers 404 saying why (ConsoleSwitchTests).
    }
}
