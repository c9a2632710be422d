import HearthAccounts
import HearthHTTP
import HearthJSON
import Logging

/// Sends each request to its endpoint. Fixed routes first; every other path is an RTDB
/// location (docs/protocol/rest.md §1.1), with or without the `.json` suffix. Data stored
/// under a key named like a fixed route (`healthz`) is reached with the suffix:
/// `/healthz.json`.
struct Router: HTTPHandler {
    /// The default namespace's context (and the server-wide parts every namespace shares).
    let context: RESTContext
    /// The namespaces: which core a request's `ns` (or host) picks; nil: only
    /// `context`'s.
    var namespaces: NamespaceRegistry? = nil
    /// Whether the admin console is on and why; while it is off, console paths answer a
    /// 404 saying so (nil: they are database locations, as for a router in a namespace).
    var consoleSwitch: ConsoleSwitch? = nil

    func handle(_ request: HTTPRequest, responder: HTTPResponder) {
        // Every answer says its Content-Type is meant (JSON, the long poll's scripts): a
        // browser never sniffs a JSON body into a script or a page.
        let responder = responder.transformingHeads { $0.headers.set("X-Content-Type-Options", "nosniff") }
        switch request.path {
        case "/healthz":
            return fixedRoute(request, responder) { HealthEndpoint.healthz(responder: responder) }
        case "/readyz":
            let databases = namespaces?.all.map { (name: $0.name, context: $0.context) } ?? [(name: "", context: context)]
            return fixedRoute(request, responder) { HealthEndpoint.readyz(databases: databases, responder: responder) }
        case "/.well-known/jwks.json":
            return fixedRoute(request, responder) { responder.respond(context.auth.jwks()) }
        case "/metrics":
            return fixedRoute(request, responder) { metrics(request, responder: responder) }
        case WireEndpoint.path:
            return transport(request, responder: responder, WireEndpoint.handle)
        case LongPollEndpoint.path:
            return transport(request, responder: responder, LongPollEndpoint.handle)
        case CoverageEndpoint.htmlPath, CoverageEndpoint.jsonPath, CoveragePage.stylesheetPath:
            return fixedRoute(request, responder) { inspectCoverage(request, responder: responder) }
        default:
            break
        }
        if let console = context.console, ConsoleRoute.matches(request.path) {
            return ConsoleRoute(accounts: console, context: context, namespaces: namespaces).handle(request, responder: responder)
        }
        if context.console == nil, let consoleSwitch, ConsoleRoute.matches(request.path), !request.path.hasSuffix(".json") {
            // Answered here, before a namespace is picked or the database read: a browser
            // pointed at the console learns why it is missing. A `.json` path names a
            // database location (`/console/x.json`) and stays one.
            return responder.respond(ConsoleRoute.error(404, consoleSwitch.offMessage))
        }
        if request.method == "OPTIONS" {
            return responder.respond(Self.preflight(request, emulatorMode: context.auth.authenticator.acceptEmulatorOwner))
        }
        if let target = AdminAccountsRoute.target(forPath: request.path) {
            return AdminAccountsRoute(context: context.auth).handle(target, request, responder: responder)
        }
        if let operation = AccountsRoute.operation(forPath: request.path) {
            return AccountsRoute(context: context.auth).handle(operation, request, responder: responder)
        }
        if AdminGrantEndpoint.matches(request.path) {
            return AdminGrantEndpoint(context: context.auth, verifier: context.adminGrant).handle(request, responder: responder)
        }
        if TokenEndpoint.matches(request.path) {
            return TokenEndpoint(context: context.auth).handle(request, responder: responder)
        }
        if AccountsRoute.isReserved(request.path) {
            return responder.respond(AuthError.notFound.response)
        }
        let isRules = request.path == "/.settings/rules.json" || request.path == "/.settings/rules"
        if request.path == Self.profilePath, let namespaces, case .create(let name) = namespaces.resolve(query: request.query, host: nil) {
            // Profiling never creates a namespace (emulator mode would).
            return responder.respond(APIError(404, "Namespace \"\(name)\" is not served here").response)
        }
        if isRules, request.method == "PUT", let namespaces, let name = NamespaceName.named(query: request.query, host: nil)?.name,
           namespaces.wouldCreate(name) {
            return createNamespace(name, request, registry: namespaces, responder: responder)
        }
        withNamespaceContext(of: request, responder: responder) { picked in
            switch picked {
            case .success(let scoped):
                Router(context: scoped).handleInNamespace(request, isRules: isRules, responder: responder.tagged(scoped.namespaceLabel))
            case .failure(let refusal):
                responder.respond(refusal.response)
            }
        }
    }

    /// Runs `body` with the context of the namespace `request` names, or the refusal: a name
    /// no namespace has (404), or one that could not be created (400, 403, 503) — on REST the
    /// answer, on `/.ws` and `/.lp` the shutdown's reason. In emulator mode a name's first
    /// use creates it: that opens a store (tens of milliseconds), so it runs on the work
    /// queue, not on the connection's I/O thread, and `body` then runs on the connection's
    /// queue as it would have.
    private func withNamespaceContext(of request: HTTPRequest, responder: HTTPResponder,
                                      _ body: @escaping @Sendable (Result<RESTContext, APIError>) -> Void) {
        guard let namespaces else { return body(.success(context)) }
        let resolution = namespaces.resolve(query: request.query, host: request.headers["Host"])
        guard case .create(let name) = resolution else { return body(picked(resolution, in: namespaces)) }
        let router = self
        context.auth.work.async {
            let picked = router.picked(namespaces.created(name), in: namespaces)
            guard let queue = responder.connectionQueue else { return body(picked) }
            queue.async { body(picked) }
        }
    }

    /// A wire transport's session (`/.ws`, `/.lp`) on the namespace `request` names; a
    /// refused name's reason goes to the session's shutdown.
    private func transport(_ request: HTTPRequest, responder: HTTPResponder,
                           _ open: @escaping @Sendable (HTTPRequest, RESTContext, HTTPResponder, String?) -> Void) {
        withNamespaceContext(of: request, responder: responder) { [context] picked in
            switch picked {
            case .success(let scoped): open(request, scoped, responder.tagged(scoped.namespaceLabel), nil)
            case .failure(let refusal): open(request, context, responder, refusal.message)
            }
        }
    }

    /// The context a resolution picks, or its refusal.
    private func picked(_ resolution: NamespaceRegistry.Resolution, in namespaces: NamespaceRegistry) -> Result<RESTContext, APIError> {
        switch resolution {
        case .found(let namespace): .success(namespace === namespaces.primary ? context : namespace.context)
        case .unknown(let name): .failure(APIError(404, "Namespace \"\(name.prefix(NamespaceName.maxBytes))\" is not served here"))
        case .refused(let creation): .failure(creation.apiError)
        // `created` never answers this; refuse rather than loop.
        case .create: .failure(NamespaceRegistry.Creation.failed("").apiError)
        }
    }

    /// A request for one namespace's database (`context` is that namespace's).
    private func handleInNamespace(_ request: HTTPRequest, isRules: Bool, responder: HTTPResponder) {
        if isRules {
            return rulesSettings(request, responder: responder)
        }
        if request.path == Self.profilePath {
            return profile(request, responder: responder)
        }
        let rest: RESTRequest
        do {
            rest = try RESTRequest(request)
        } catch {
            return responder.respond(error.response)
        }
        guard let token = Authenticator.credential(of: request, options: rest.options) else {
            return dispatch(rest, credential: Authenticator.Credential(caller: .unauthenticated), responder: responder)
        }
        // A token seen before, whose user's status is fresh, is decided from the caches:
        // no hop. Otherwise verifying may check a signature or read the user's row: off
        // the I/O queue.
        // The emulator's `owner` only straight from this machine, never through a proxy.
        if !LocalOnlyCredentials.admissible(token, request) {
            return responder.respond(Authenticator.CredentialError.invalid.apiError.response)
        }
        let routerContext = context
        let (profiler, authStart) = (context.database.profiler, context.database.profiler.isRecording ? Profiler.now : 0)
        context.auth.authenticator.decide(token: token, work: context.auth.work) { result in
            if authStart != 0 { profiler.recordAuth(.rest, nanoseconds: Profiler.since(authStart)) }
            switch result {
            case .success(let credential): Router(context: routerContext).dispatch(rest, credential: credential, responder: responder)
            case .failure(let error): responder.respond(error.apiError.response)
            }
        }
    }

    func dispatch(_ rest: RESTRequest, credential: Authenticator.Credential, responder: HTTPResponder) {
        var credential = credential
        if let override = rest.options.authOverride {
            // Only an admin may speak as someone else; it is then judged by the rules as them.
            guard credential.caller.isAdmin else {
                return responder.respond(APIError(401, "auth_variable_override needs an admin credential").response)
            }
            credential = Authenticator.Credential(caller: Caller(auth: override), expiresAt: credential.expiresAt)
        }
        let caller = credential.caller
        let responder = context.database.profiler.isRecording ? ProfileRecording.recording(rest, in: context.database, responder) : responder
        do {
            switch rest.method {
            case .get where rest.http.method == "GET" && StreamEndpoint.wantsStream(rest.http):
                StreamEndpoint.handle(rest, credential: credential, context: context, responder: responder)
            case .get: ReadEndpoint.handle(rest, caller: caller, context: context, responder: responder)
            case .put: try PutEndpoint.handle(rest, caller: caller, context: context, responder: responder)
            case .post: try PostEndpoint.handle(rest, caller: caller, context: context, responder: responder)
            case .patch: try PatchEndpoint.handle(rest, caller: caller, context: context, responder: responder)
            case .delete: DeleteEndpoint.handle(rest, caller: caller, context: context, responder: responder)
            }
        } catch {
            responder.respond(error.response)
        }
    }

    /// `GET /metrics` (Prometheus text): for clients on loopback (the client as seen through
    /// trusted proxies, so the world behind nginx is not loopback once `trustedProxies` is
    /// set; the shipped nginx site also denies the path) or with an admin credential.
    private func metrics(_ request: HTTPRequest, responder: HTTPResponder) {
        guard let render = context.metricsText else { return responder.respond(APIError(404, "Not found").response) }
        let answer: @Sendable () -> Void = {
            var headers = HTTPHeaders()
            headers.add("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
            responder.respond(HTTPResponse(status: 200, headers: headers, body: render()))
        }
        if HearthService.isLoopback(request.remoteAddress) { return answer() }
        var options = QueryOptions.defaults
        options.credential = nil
        guard let token = Authenticator.credential(of: request, options: options),
              LocalOnlyCredentials.admissible(token, request) else {
            return responder.respond(APIError.permissionDenied.response)
        }
        let authenticator = context.auth.authenticator
        context.auth.work.async {
            guard (try? authenticator.caller(token: token).isAdmin) == true else {
                return responder.respond(APIError.permissionDenied.response)
            }
            answer()
        }
    }

    /// `GET`/`PUT /.settings/rules.json`: admins only.
    private func rulesSettings(_ request: HTTPRequest, responder: HTTPResponder) {
        guard let settings = context.rulesSettings else { return responder.respond(APIError(404, "Not found").response) }
        guard request.method == "GET" || request.method == "PUT" else {
            return responder.respond(APIError(405, "Method not allowed", headers: [("Allow", "GET, PUT")]).response)
        }
        let parameters = Self.parameters(of: request)
        asAdmin(request, parameters, responder: responder) {
            if request.method == "GET" {
                responder.respond(settings.get(strict: parameters["format"] == "strict"))
            } else {
                responder.respond(settings.put(request.body, dryRun: parameters["dryRun"] == "true", by: .adminToken))
            }
        }
    }

    /// `PUT /.settings/rules.json?ns=<name>` for a namespace not served yet, in emulator mode:
    /// an admin's (`Bearer owner`) valid rules create it (bad rules: 400, and
    /// nothing is created); then its rules are replaced as for any namespace.
    private func createNamespace(_ name: String, _ request: HTTPRequest, registry: NamespaceRegistry, responder: HTTPResponder) {
        let parameters = Self.parameters(of: request)
        let body = request.body
        asAdmin(request, parameters, responder: responder) {
            if let refusal = RulesSettings.check(body) { return responder.respond(refusal) }
            if parameters["dryRun"] == "true" {
                return responder.respond(JSONResponse.make(.object(["status": "ok"]), options: .defaults, render: false))
            }
            do throws(NamespaceRegistry.Creation) {
                let namespace = try registry.create(name, rules: body)
                responder.tagged(namespace.context.namespaceLabel)
                    .respond(namespace.rulesSettings.put(body, dryRun: false, by: .adminToken))
            } catch {
                responder.respond(error.apiError.response)
            }
        }
    }

    /// Runs `body` on the work queue when `request` carries an admin's credential; 401 otherwise.
    func asAdmin(_ request: HTTPRequest, _ parameters: [String: String], responder: HTTPResponder,
                         _ body: @escaping @Sendable () -> Void) {
        var options = QueryOptions.defaults
        options.credential = parameters["auth"]
        guard let token = Authenticator.credential(of: request, options: options),
              LocalOnlyCredentials.admissible(token, request) else {
            return responder.respond(APIError.permissionDenied.response)
        }
        let authenticator = context.auth.authenticator
        context.auth.work.async {
            do throws(APIError) {
                guard try authenticator.caller(token: token).isAdmin else { throw .permissionDenied }
                body()
            } catch {
                responder.respond(error.response)
            }
        }
    }

    /// The query parameters, percent-decoded.
    static func parameters(of request: HTTPRequest) -> [String: String] {
        Dictionary((request.query ?? "").split(separator: "&").map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1)
            return (String(parts[0]), parts.count > 1 ? PercentEncoding.decode(parts[1].utf8, plusIsSpace: true) ?? "" : "")
        }, uniquingKeysWith: { $1 })
    }

    private func fixedRoute(_ request: HTTPRequest, _ responder: HTTPResponder, _ body: () -> Void) {
        guard request.method == "GET" || request.method == "HEAD" else {
            return responder.respond(APIError(405, "Method not allowed", headers: [("Allow", "GET, HEAD")]).response)
        }
        body()
    }

    /// CORS preflight for browser clients: any origin, as Firebase answers. In emulator mode
    /// a page of another origin is not told `Authorization` is allowed, so its browser
    /// never sends the emulator's `owner` in that header (sent anyway, or in `?auth=`, it
    /// is refused: `LocalOnlyCredentials`).
    static func preflight(_ request: HTTPRequest, emulatorMode: Bool = false) -> HTTPResponse {
        var headers = JSONResponse.corsHeaders()
        headers.add("Access-Control-Allow-Methods", "GET, PUT, POST, PATCH, DELETE, OPTIONS")
        var allowed = request.headers["Access-Control-Request-Headers"].map(Self.sanitizedHeaderList) ?? "Authorization, Content-Type"
        if !LocalOnlyCredentials.preflightMayAllowAuthorization(request, emulatorMode: emulatorMode) {
            allowed = allowed.split(separator: ",").map { $0.filter { $0 != " " } }
                .filter { !$0.isEmpty && $0.lowercased() != "authorization" }.joined(separator: ", ")
        }
        headers.add("Access-Control-Allow-Headers", allowed)
        headers.add("Access-Control-Max-Age", "3600")
        return HTTPResponse(status: 204, headers: headers)
    }

    /// Only header-name characters, so the echo cannot inject anything into the response.
    static func sanitizedHeaderList(_ list: String) -> String {
        String(list.unicodeScalars.filter { $0.isASCII && ($0 == "," || $0 == " " || $0 == "-" || $0.properties.isAlphabetic || ("0"..."9").contains($0)) }.map(Character.init))
    }
}
