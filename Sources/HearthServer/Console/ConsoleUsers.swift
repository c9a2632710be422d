import HearthAccounts
import HearthHTTP
import HearthJSON

/// The console's Users screen: find a user by email or uid, page
/// through all of them, see one, disable or enable, sign out everywhere, delete, set custom
/// claims, and send a password-reset mail (when SMTP is configured). `<uid>` in the paths
/// is percent-encoded (it may hold `/`, `%`, anything a uid may). Blocking work: called
/// on the auth work queue (`ConsoleRoute.api`).
extension ConsoleRoute {
    /// Users per page of the list.
    static let usersPageSize = 50

    func users(_ request: HTTPRequest, _ endpoint: String, respond: @escaping @Sendable (HTTPResponse) -> Void) {
        let service = auth.service
        // The uid is one percent-encoded segment (the page sends `encodeURIComponent(uid)`):
        // any uid Firebase allows, `/` included, is reached, and only the one it names.
        let segments = endpoint.split(separator: "/", omittingEmptySubsequences: false)
        let parts = segments.compactMap { PercentEncoding.decode($0.utf8) }
        guard parts.count == segments.count else { return respond(Self.error(400, "a malformed percent-escape in the path")) }
        do throws(AuthError) {
            let parameters = try AdminAccountsRoute.queryParameters(request.query)
            switch (parts.count, request.method) {
            case (1, "GET"):
                let query = (parameters["q"] ?? "").trimmingCharacters(in: .whitespaces)
                if !query.isEmpty {
                    let found = query.contains("@")
                        ? try service.wrap { try service.accounts.user(email: query.lowercased()) }
                        : try service.wrap { try service.accounts.user(uid: query) }
                    return respond(Self.json(["users": .array(found.map { [AccountService.userInfo($0)] } ?? [])]))
                }
                let page = try service.wrap { try service.accounts.users(after: parameters["after"], limit: Self.usersPageSize + 1) }
                var fields: [JSONKey: JSONValue] = ["users": .array(page.prefix(Self.usersPageSize).map(AccountService.userInfo))]
                if page.count > Self.usersPageSize, let last = page.prefix(Self.usersPageSize).last { fields["next"] = .string(last.uid) }
                respond(Self.json(.object(fields)))
            case (2, "GET"):
                guard let user = try service.wrap({ try service.accounts.user(uid: parts[1]) }) else { throw .userNotFound }
                var info = AccountService.userInfo(user).objectValue ?? [:]
                info["provider"] = .string(user.provider.rawValue)
                respond(Self.json(.object(info)))
            case (2, "DELETE"):
                try service.delete(uid: parts[1])
                auth.authenticator.invalidate(parts[1])
                respond(Self.json(["deleted": true]))
            case (3, "POST") where parts[2] == "disable" || parts[2] == "enable":
                var changes = AccountService.Changes()
                changes.disabled = parts[2] == "disable"
                _ = try service.update(uid: parts[1], changes)
                auth.authenticator.invalidate(parts[1])
                respond(Self.json(["disabled": .bool(parts[2] == "disable")]))
            case (3, "POST") where parts[2] == "revoke":
                try service.revokeSessions(uid: parts[1])
                auth.authenticator.invalidate(parts[1])
                respond(Self.json(["revoked": true]))
            case (3, "PUT") where parts[2] == "claims":
                guard case .object(let body)? = try? JSONParser.parse(request.body), let claims = body["claims"] else {
                    throw AuthError("INVALID_CLAIMS", detail: "send {\"claims\": {...}}")
                }
                var changes = AccountService.Changes()
                changes.customClaims = try CustomClaimsPolicy.parse(claims)
                _ = try service.update(uid: parts[1], changes)
                auth.authenticator.invalidate(parts[1])
                respond(Self.json(["claims": claims]))
            case (3, "POST") where parts[2] == "reset":
                guard auth.mailer != nil else { throw .emailNotConfigured }
                guard let user = try service.wrap({ try service.accounts.user(uid: parts[1]) }) else { throw .userNotFound }
                guard let email = user.email else { throw AuthError("INVALID_EMAIL", detail: "the user has no email address") }
                let code = try service.createActionCode(.passwordReset, for: user)
                if let failure = auth.sendActionMail(.passwordReset, to: email, code: code) { throw failure }
                respond(Self.json(["sent": .string(email)]))
            default:
                respond(Self.error(404, "no such console API"))
            }
        } catch {
            // Account errors as the console shows them: the code and its detail.
            respond(Self.error(error.status, error.message))
        }
    }
}
