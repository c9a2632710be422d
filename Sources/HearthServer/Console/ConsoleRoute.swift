import Dispatch
import HearthAccounts
import HearthAuth
import HearthHTTP
import HearthJSON

/// The admin console at `/console/`: its static files (compiled into the binary,
/// `ConsoleAssets`) and its API under `/console/api/`. Every answer carries a strict
/// Content-Security-Policy (no inline script), `X-Frame-Options: DENY` and `nosniff`.
///
/// Sessions are cookies (`HttpOnly`, `SameSite=Strict`, `Path=/console`; when the client
/// came over TLS through a trusted proxy, `__Host-hearth_console` with `Secure` and
/// `Path=/`); every cookie of either name is tried, so one set elsewhere cannot shadow the
/// session's. Every state-changing API call needs the session's CSRF token in
/// `X-CSRF-Token`; the sign-in itself needs a JSON body and, when the browser sends
/// `Origin`, the console's own origin. Errors are `{"error": "..."}`. Calls on a database
/// (data, rules, triggers) name its namespace in `ns` (`ConsoleNamespaces`); a session is
/// the server's, for every namespace.
struct ConsoleRoute {
    let accounts: ConsoleAccounts
    /// The context of the namespace the call acts on (the default's until `scoped(to:)`).
    let context: RESTContext
    /// The server's namespaces the console picks among (`ConsoleNamespaces`); nil: the default only.
    var namespaces: NamespaceRegistry? = nil
    /// The name of the namespace the call acts on; empty for the default.
    var namespace = ""
    var auth: AuthContext { context.auth }

    static let prefix = "/console"
    static let cookieName = "hearth_console"
    static let securityHeaders: [(String, String)] = [
        ("Content-Security-Policy",
         "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
            + "font-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"),
        ("X-Frame-Options", "DENY"),
        ("X-Content-Type-Options", "nosniff"),
        ("Referrer-Policy", "no-referrer"),
        ("Cross-Origin-Opener-Policy", "same-origin"),
    ]

    static func matches(_ path: String) -> Bool {
        path == prefix || path.hasPrefix(prefix + "/")
    }

    /// What every console answer carries, whoever wrote it (the REST API's endpoints and
    /// streams too): the security headers, and no CORS grant (the REST API's
    /// `Access-Control-Allow-Origin: *` would let any site read a console answer the
    /// browser sends with the session's cookie, were `SameSite` ever lax).
    static func secure(_ response: inout HTTPResponse) {
        response.headers.removeAll { $0.lowercased().hasPrefix("access-control-") }
        for (name, value) in securityHeaders { response.headers.set(name, value) }
    }

    func handle(_ request: HTTPRequest, responder: HTTPResponder) {
        let responder = responder.transformingHeads(Self.secure)
        let respond: @Sendable (HTTPResponse) -> Void = { responder.respond($0) }
        let path = request.path
        if path == Self.prefix {
            var moved = HTTPResponse(status: 308)
            moved.headers.add("Location", Self.prefix + "/")
            return respond(moved)
        }
        if path.hasPrefix(Self.prefix + "/api/") {
            return api(request, String(path.dropFirst(Self.prefix.count + 5)), respond: respond, raw: responder)
        }
        guard request.method == "GET" || request.method == "HEAD" else { return respond(Self.error(405, "method not allowed")) }
        let name = path == Self.prefix + "/" ? "index.html" : String(path.dropFirst(Self.prefix.count + 1))
        guard let asset = ConsoleAssets.files[name] else { return respond(Self.error(404, "no such console file")) }
        var response = HTTPResponse(status: 200, body: request.method == "HEAD" ? [] : Array(asset.body.utf8))
        response.headers.add("Content-Type", asset.contentType)
        response.headers.add("Cache-Control", "no-cache")
        respond(response)
    }

    static func error(_ status: Int, _ message: String) -> HTTPResponse {
        var response = HTTPResponse(status: status, body: JSONWriter.write(.object(["error": .string(message)])))
        response.headers.add("Content-Type", "application/json; charset=utf-8")
        response.headers.add("Cache-Control", "no-store")
        return response
    }

    static func json(_ value: JSONValue, status: Int = 200) -> HTTPResponse {
        var response = HTTPResponse(status: status, body: JSONWriter.write(value))
        response.headers.add("Content-Type", "application/json; charset=utf-8")
        response.headers.add("Cache-Control", "no-store")
        return response
    }

    /// The cookie's name when the client reached Hearth over TLS through a trusted proxy:
    /// a browser keeps a `__Host-` cookie only from a secure page, with `Secure`, `Path=/`
    /// and no `Domain`, so neither a sibling domain nor a plain-HTTP page can set one.
    static let secureCookieName = "__Host-" + cookieName

    /// Every session token the request's cookies offer, in order, under either name. A
    /// browser sends every cookie whose host and path match, and cookies know no ports:
    /// another page on this host may have set one of the same name (with a longer
    /// `Path`, sent first). The session is the first of them that is live.
    static func cookieTokens(_ request: HTTPRequest) -> [String] {
        var tokens: [String] = []
        for header in request.headers.values("Cookie") {
            for pair in header.split(separator: ";") {
                let trimmed = pair.trimmingPrefix(while: { $0 == " " })
                for name in [cookieName, secureCookieName] where trimmed.hasPrefix(name + "=") {
                    let token = String(trimmed.dropFirst(name.count + 1))
                    if !tokens.contains(token) { tokens.append(token) }
                }
            }
        }
        return tokens
    }

    func cookie(_ value: String, maxAge: Int64, request: HTTPRequest) -> String {
        let attributes = "HttpOnly; SameSite=Strict; Max-Age=\(maxAge)"
        return request.forwardedProto == "https"
            ? "\(Self.secureCookieName)=\(value); Path=/; \(attributes); Secure"
            : "\(Self.cookieName)=\(value); Path=\(Self.prefix); \(attributes)"
    }

    // MARK: API

    private func api(_ request: HTTPRequest, _ endpoint: String, respond: @escaping @Sendable (HTTPResponse) -> Void, raw: HTTPResponder) {
        let (accounts, auth, tokens) = (self.accounts, self.auth, Self.cookieTokens(request))
        let route = self
        if endpoint == "session" && request.method == "POST" { return signIn(request, respond: respond) }
        // Everything else needs a session (looked up off the I/O queue: the store blocks).
        auth.work.async {
            let session: ConsoleAccounts.Session?
            do {
                session = try accounts.session(tokens: tokens)
            } catch {
                return respond(Self.error(500, "the console's sessions cannot be read"))
            }
            guard let session else { return respond(Self.error(401, "not signed in")) }
            let safe = request.method == "GET" || request.method == "HEAD"
            if !safe {
                guard let sent = request.headers["X-CSRF-Token"], ConstantTime.equals(sent, session.csrf) else {
                    return respond(Self.error(403, "missing or wrong CSRF token"))
                }
            }
            route.signedIn(request, endpoint, session: session, respond: respond, raw: raw)
        }
    }

    private func signedIn(_ request: HTTPRequest, _ endpoint: String, session: ConsoleAccounts.Session,
                          respond: @escaping @Sendable (HTTPResponse) -> Void, raw: HTTPResponder) {
        let perNamespace = ["rest", "rules", "triggers", "profile"].contains { endpoint == $0 || endpoint.hasPrefix($0 + "/") }
        guard perNamespace else {
            // Administrators, sessions, app users and metrics are the server's.
            guard Self.namespaceParameters(request.query).isEmpty else {
                return respond(Self.error(400, "ns does not apply here: accounts, sessions and metrics are the server's"))
            }
            return serverWide(request, endpoint, session: session, respond: respond)
        }
        let route: ConsoleRoute
        switch scoped(to: request) {
        case .route(let scoped): route = scoped
        case .refused(let answer): return respond(answer)
        }
        if endpoint == "rest" || endpoint.hasPrefix("rest/") {
            return route.rest(request, String(endpoint.dropFirst("rest".count)), session: session, responder: raw)
        }
        if endpoint == "rules" || endpoint.hasPrefix("rules/") {
            return route.rules(request, endpoint, session: session, respond: respond)
        }
        if endpoint == "profile" { return route.profile(request, respond: respond) }
        route.triggers(request, endpoint, respond: respond)
    }

    /// The calls that name no namespace.
    private func serverWide(_ request: HTTPRequest, _ endpoint: String, session: ConsoleAccounts.Session,
                            respond: @escaping @Sendable (HTTPResponse) -> Void) {
        if endpoint == "namespaces" && request.method == "GET" {
            return respond(namespaceList())
        }
        if endpoint == "users" || endpoint.hasPrefix("users/") {
            return users(request, endpoint, respond: respond)
        }
        if endpoint == "metrics" && request.method == "GET" {
            // The Health screen's source: the very counters of `/metrics`.
            guard let render = context.metricsText else { return respond(Self.error(404, "no metrics here")) }
            var response = HTTPResponse(status: 200, body: render())
            response.headers.add("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
            response.headers.add("Cache-Control", "no-store")
            return respond(response)
        }
        switch (endpoint, request.method) {
        case ("session", "GET"):
            respond(Self.json(["email": .string(session.email), "csrf": .string(session.csrf)]))
        case ("session", "DELETE"):
            do { try accounts.signOut(token: session.token) } catch { return respond(Self.error(500, "the session could not be ended")) }
            var response = Self.json(["signedOut": true])
            response.headers.add("Set-Cookie", cookie("", maxAge: 0, request: request))
            respond(response)
        default:
            respond(Self.error(404, "no such console API"))
        }
    }

    /// `/console/api/rest/<location>`: the database's REST API (reads, writes, `shallow`,
    /// queries, streams) as an administrator, for the signed-in console. Writes passed the
    /// CSRF check above. A stream ends when the session would (its absolute expiry).
    private func rest(_ request: HTTPRequest, _ location: String, session: ConsoleAccounts.Session, responder: HTTPResponder) {
        var inner = request
        inner.path = location.isEmpty ? "/" : location
        inner.target = inner.path + (request.query.map { "?" + $0 } ?? "")
        let rest: RESTRequest
        do {
            rest = try RESTRequest(inner)
        } catch {
            return responder.respond(error.response)
        }
        let admin = Authenticator.Credential(caller: Caller(auth: .null, isAdmin: true),
                                             expiresAt: session.createdAt + ConsoleAccounts.absoluteSeconds * 1000)
        Router(context: context).dispatch(rest, credential: admin, responder: responder)
    }

    /// `POST /console/api/session` `{"email", "password"}`: the same hashing pool, per-address
    /// limit and wrong-password throttle as users' sign-in.
    private func signIn(_ request: HTTPRequest, respond: @escaping @Sendable (HTTPResponse) -> Void) {
        guard (request.headers["Content-Type"] ?? "").lowercased().hasPrefix("application/json") else {
            return respond(Self.error(415, "sign in with a JSON body"))
        }
        if let origin = request.headers["Origin"], let host = request.headers["Host"],
           origin != "http://\(host)", origin != "https://\(host)" {
            return respond(Self.error(403, "sign-in from another site"))
        }
        guard case .object(let body)? = try? JSONParser.parse(request.body),
              let email = body["email"]?.stringValue, let password = body["password"]?.stringValue else {
            return respond(Self.error(400, "email and password are needed"))
        }
        let account = "console:" + email.lowercased()
        if let retry = auth.limitSignIn(address: request.remoteAddress, account: account) {
            var response = Self.error(429, "too many attempts; try again later")
            if let wait = retry.retryAfter { response.headers.add("Retry-After", String(wait)) }
            return respond(response)
        }
        let (accounts, auth, route) = (self.accounts, self.auth, self)
        let address = request.remoteAddress
        auth.pool.submit({ () -> Result<ConsoleAccounts.Session, ConsoleAccounts.Failure> in
            do throws(ConsoleAccounts.Failure) { return .success(try accounts.signIn(email: email, password: password)) } catch { return .failure(error) }
        }, completion: { result in
            switch result {
            case .success(.success(let session)):
                auth.signedIn(account: account, address: address)
                var response = Self.json(["email": .string(session.email), "csrf": .string(session.csrf)])
                response.headers.add("Set-Cookie", route.cookie(session.token, maxAge: ConsoleAccounts.absoluteSeconds, request: request))
                respond(response)
            case .success(.failure(.wrongCredentials)):
                respond(Self.error(400, "wrong email or password"))
            case .success(.failure):
                respond(Self.error(500, "the console's accounts cannot be read"))
            case .failure:
                var response = Self.error(429, "too many sign-ins at once; try again")
                response.headers.add("Retry-After", "1")
                respond(response)
            }
        })
    }
}
