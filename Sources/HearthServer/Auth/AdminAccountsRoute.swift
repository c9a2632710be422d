import HearthAccounts
import HearthAuth
import HearthHTTP
import HearthJSON

/// The Admin SDKs' user management (docs/protocol/admin-client.md §7):
/// `POST …/projects/P/accounts` (create), `…/accounts:lookup`, `:update`, `:delete`,
/// `:batchDelete` and `GET …/accounts:batchGet`, under
/// `/identitytoolkit.googleapis.com/v1/projects/P/` (where an SDK in emulator mode sends
/// them) and `/v1/projects/P/`.
///
/// Admin only: the caller must present an admin credential (`Authorization: Bearer owner`
/// with `--accept-emulator-owner`, or a `hearth token --admin` token). Without a valid
/// credential the answer is 401, with a user's token 403; both say
/// `INSUFFICIENT_PERMISSION`, which the SDKs raise as `InsufficientPermissionError`.
/// `P` must be this server's project id (`--project-id`); Hearth has no tenants.
struct AdminAccountsRoute {
    let context: AuthContext

    static let prefixes = ["/identitytoolkit.googleapis.com/v1/projects/", "/v1/projects/"]

    enum Operation: String {
        /// `POST …/accounts` (no `:op`).
        case create = ""
        case lookup, update, delete, batchDelete, batchGet
    }

    /// A parsed `…/projects/P[/tenants/T]/accounts[:op]` path.
    struct Target: Sendable, Equatable {
        var projectID: String
        var tenantID: String?
        /// The text after `accounts:`, empty for `…/accounts` itself.
        var operation: String
    }

    /// The target of `path`, or nil when it is not an admin accounts path.
    static func target(forPath path: String) -> Target? {
        guard let prefix = prefixes.first(where: path.hasPrefix) else { return nil }
        let parts = path.dropFirst(prefix.count).split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2 || (parts.count == 4 && parts[1] == "tenants"),
              let project = PercentEncoding.decode(parts[0].utf8), !project.isEmpty else { return nil }
        var tenant: String?
        if parts.count == 4 {
            guard let decoded = PercentEncoding.decode(parts[2].utf8), !decoded.isEmpty else { return nil }
            tenant = decoded
        }
        let last = parts[parts.count - 1]
        let operation: Substring
        if last == "accounts" {
            operation = ""
        } else if last.hasPrefix("accounts:") {
            operation = last.dropFirst("accounts:".count)
            guard !operation.isEmpty else { return nil }
        } else {
            return nil
        }
        return Target(projectID: project, tenantID: tenant, operation: String(operation))
    }

    func handle(_ target: Target, _ request: HTTPRequest, responder: HTTPResponder) {
        guard let operation = Operation(rawValue: target.operation) else {
            return responder.respond(AuthError("NOT_FOUND", detail: "accounts:\(target.operation) is not implemented by Hearth", kind: .notFound).response)
        }
        let method = operation == .batchGet ? "GET" : "POST"
        guard request.method == method else { return responder.respond(AuthError("METHOD_NOT_ALLOWED", kind: .methodNotAllowed).response) }
        let body: AuthRequestBody
        let query: [String: String]
        do throws(AuthError) {
            query = try Self.queryParameters(request.query)
            body = operation == .batchGet ? AuthRequestBody(fields: Dictionary(uniqueKeysWithValues: query.map { (JSONKey($0.key), JSONValue.string($0.value)) })) : try AuthRequestBody(request)
        } catch {
            return responder.respond(error.response)
        }
        let token = Self.credential(of: request, query: query)
        if let token, !LocalOnlyCredentials.admissible(token, request) {
            return responder.respond(AuthError("INSUFFICIENT_PERMISSION", detail: "the emulator's owner token is honoured only straight from this machine, not through a proxy; \(Self.credentialHelp)", kind: .unauthenticated).response)
        }
        let route = self
        // Verifying a token may read a user's row: off the I/O queue.
        context.work.async {
            do throws(AuthError) {
                try route.authorize(token)
                try route.check(target)
            } catch {
                return responder.respond(error.response)
            }
            let accounts = AccountsRoute(context: route.context)
            do throws(AuthError) {
                switch operation {
                case .create: try AdminCreateEndpoint.handle(body, route: accounts, responder: responder)
                case .lookup: try AdminLookupEndpoint.handle(body, route: accounts, responder: responder)
                case .update: try AdminUpdateEndpoint.handle(body, route: accounts, responder: responder)
                case .delete: try AdminDeleteEndpoint.handle(body, route: accounts, responder: responder)
                case .batchDelete: try AdminDeleteEndpoint.handleBatch(body, route: accounts, responder: responder)
                case .batchGet: try AdminListEndpoint.handle(body, route: accounts, responder: responder)
                }
            } catch {
                // A field of the wrong type (`AuthRequestBody.typeMismatch`), before any work.
                responder.respond(error.response)
            }
        }
    }

    static let credentialHelp = "an admin credential is required: Authorization: Bearer owner (hearth serve --accept-emulator-owner) or a token from hearth token --admin"

    /// Refuses anyone but an admin. Blocking (token verification): call from a work queue.
    func authorize(_ token: String?) throws(AuthError) {
        guard let token, !token.isEmpty else { throw AuthError("INSUFFICIENT_PERMISSION", detail: Self.credentialHelp, kind: .unauthenticated) }
        let caller: Caller
        do {
            caller = try context.authenticator.caller(token: token)
        } catch {
            throw AuthError("INSUFFICIENT_PERMISSION", detail: "\(error.message); \(Self.credentialHelp)", kind: .unauthenticated)
        }
        guard caller.isAdmin else { throw AuthError("INSUFFICIENT_PERMISSION", detail: "only an admin may manage users", kind: .forbidden) }
    }

    /// The path's project must be this server's; there are no tenants.
    func check(_ target: Target) throws(AuthError) {
        let projectID = context.service.settings.projectID
        guard target.projectID == projectID else {
            throw AuthError("PROJECT_NOT_FOUND", detail: "this server's project id is \(projectID) (--project-id)", kind: .notFound)
        }
        if target.tenantID != nil { throw AuthError("TENANT_NOT_FOUND", detail: "Hearth has no tenants") }
    }

    /// `Authorization: Bearer <token>`, else the `access_token` query parameter.
    static func credential(of request: HTTPRequest, query: [String: String]) -> String? {
        if let header = request.headers["Authorization"] {
            let parts = header.split(separator: " ", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == "bearer" { return String(parts[1].drop { $0 == " " }) }
            return header  // an unusable scheme: verification fails with 401
        }
        return query["access_token"]
    }

    /// The query string's parameters, decoded; the last of a repeated name wins.
    static func queryParameters(_ query: String?) throws(AuthError) -> [String: String] {
        var parameters: [String: String] = [:]
        for pair in (query ?? "").split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = PercentEncoding.decode(parts[0].utf8, plusIsSpace: true),
                  let value = PercentEncoding.decode(parts.count > 1 ? parts[1].utf8 : Substring("").utf8, plusIsSpace: true) else {
                throw AuthError("INVALID_ARGUMENT", detail: "bad percent-encoding in the query string")
            }
            parameters[name] = value
        }
        return parameters
    }
}
