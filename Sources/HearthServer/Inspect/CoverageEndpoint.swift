import HearthHTTP
import HearthJSON
import HearthRules

/// `GET /.inspect/coverage?ns=NS` (HTML) and `/.inspect/coverage.json?ns=NS` (the format of
/// docs/protocol/emulator.md §4.9): the rules coverage of a namespace's running rules, as
/// the Firebase emulator serves it. In emulator mode, for any request straight from this
/// machine to a loopback host (`isLocalReader`); otherwise for an admin credential, and only while
/// `recordRulesCoverage` is on (409 otherwise). `/.inspect/coverage.css` is the page's
/// stylesheet (the page has no script and no inline style: the console's CSP).
enum CoverageEndpoint {
    static let htmlPath = "/.inspect/coverage"
    static let jsonPath = "/.inspect/coverage.json"

    /// Why the endpoint cannot answer for the running rules, as the client's error.
    static func refusal(_ policy: RulesAccessPolicy) -> APIError? {
        guard policy.recordsCoverage else {
            return APIError(409, "rules coverage recording is off; turn on recordRulesCoverage (HEARTH_RECORD_RULES_COVERAGE=true) "
                                + "or run in emulator mode (--accept-emulator-owner)")
        }
        if policy.coverage == nil {
            return APIError(409, "rules coverage is not recorded for the running rules: \(policy.coverageRefusal ?? "unknown reason")")
        }
        return nil
    }

    static func response(_ report: CoverageReport, html: Bool, namespace: String) -> HTTPResponse {
        var response: HTTPResponse
        if html {
            let title = "Rules coverage" + (namespace.isEmpty ? "" : " — " + namespace)
            response = HTTPResponse(status: 200, body: Array(CoveragePage.html(report, title: title, styles: .linked(CoveragePage.stylesheetPath)).utf8))
            response.headers.add("Content-Type", "text/html; charset=utf-8")
        } else {
            response = HTTPResponse(status: 200, body: JSONWriter.write(report.json))
            response.headers.add("Content-Type", "application/json; charset=utf-8")
        }
        response.headers.add("Cache-Control", "no-store")
        for (name, value) in ConsoleRoute.securityHeaders { response.headers.set(name, value) }
        return response
    }

    /// In emulator mode, whether `request` may read coverage without a credential: straight
    /// from this machine (`LocalOnlyCredentials`) and addressed to a loopback host, so a
    /// page that rebinds its own name to 127.0.0.1 cannot read the rules through it.
    static func isLocalReader(_ request: HTTPRequest) -> Bool {
        guard LocalOnlyCredentials.isDirectLocal(request) else { return false }
        guard let host = request.headers["Host"] else { return true }
        return LoopbackOrigin.isLoopback(origin: "http://" + host)
    }

    static var stylesheet: HTTPResponse {
        var response = HTTPResponse(status: 200, body: Array(CoveragePage.css.utf8))
        response.headers.add("Content-Type", "text/css; charset=utf-8")
        response.headers.add("Cache-Control", "no-cache")
        for (name, value) in ConsoleRoute.securityHeaders { response.headers.set(name, value) }
        return response
    }
}

extension Router {
    /// `/.inspect/coverage(.json|.css)` (`CoverageEndpoint`).
    func inspectCoverage(_ request: HTTPRequest, responder: HTTPResponder) {
        if request.path == CoveragePage.stylesheetPath { return responder.respond(CoverageEndpoint.stylesheet) }
        let html = request.path == CoverageEndpoint.htmlPath
        var target = context
        var name = ""
        if let namespaces {
            switch namespaces.resolve(query: request.query, host: request.headers["Host"]) {
            case .found(let namespace):
                if namespace !== namespaces.primary { target = namespace.context }
                name = namespace.name
            case .unknown(let unknown), .create(let unknown):
                return responder.respond(APIError(404, "Namespace \"\(unknown.prefix(NamespaceName.maxBytes))\" is not served here").response)
            case .refused(let creation):
                return responder.respond(creation.apiError.response)
            }
        }
        guard let policy = target.policy as? RulesAccessPolicy else {
            return responder.respond(APIError(404, "This database has no rules to report on").response)
        }
        let answer: @Sendable () -> Void = { [name] in
            if let refusal = CoverageEndpoint.refusal(policy) { return responder.respond(refusal.response) }
            guard let coverage = policy.coverage else { return responder.respond(APIError.internalError.response) }
            responder.respond(CoverageEndpoint.response(CoverageReport(coverage), html: html, namespace: name))
        }
        if context.auth.authenticator.acceptEmulatorOwner && CoverageEndpoint.isLocalReader(request) { return answer() }
        asAdmin(request, Self.parameters(of: request), responder: responder, answer)
    }
}
