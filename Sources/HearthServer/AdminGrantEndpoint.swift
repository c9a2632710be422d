import HearthAccounts
import HearthAuth
import HearthHTTP
import HearthJSON

/// `POST /oauth2/v4/token` (docs/triggers.md "Writing back: the credential"): the
/// OAuth2 JWT-bearer grant google-auth's service-account credentials make. An assertion
/// signed by one of `adminServiceAccounts` gets a Hearth admin token (the kind `hearth token
/// --admin` prints) as `access_token`, which firebase-admin then sends as its bearer.
/// Errors in OAuth2's shape (RFC 6749 §5.2): 400 `{"error": ..., "error_description": ...}`.
struct AdminGrantEndpoint {
    let context: AuthContext
    let verifier: AdminGrantVerifier?

    /// Lifetime of the admin tokens handed out, seconds (at most an ID token's).
    static let accessTokenLifetime: Int64 = min(3600, IDTokenClaims.maxLifetime)

    static func matches(_ path: String) -> Bool {
        path == AdminGrantVerifier.endpointPath
    }

    static func oauthError(_ status: Int, _ error: String, _ description: String) -> HTTPResponse {
        var response = JSONResponse.make(.object(["error": .string(error), "error_description": .string(description)]),
                                         options: .defaults, render: false)
        response.status = status
        response.headers.add("Cache-Control", "no-store")
        return response
    }

    func handle(_ request: HTTPRequest, responder: HTTPResponder) {
        guard request.method == "POST" else {
            return responder.respond(Self.oauthError(405, "invalid_request", "use POST"))
        }
        guard let verifier, !verifier.accounts.isEmpty else {
            return responder.respond(Self.oauthError(400, "unauthorized_client", "no adminServiceAccounts are configured"))
        }
        let body: AuthRequestBody
        do { body = try AuthRequestBody(request) } catch {
            return responder.respond(Self.oauthError(400, "invalid_request", "the body must be form-encoded, at most \(AuthRequestBody.maxBytes) bytes"))
        }
        let grantType: String?, given: String?
        do {
            (grantType, given) = (try body.string("grant_type"), try body.string("assertion"))
        } catch {
            return responder.respond(Self.oauthError(400, "invalid_request", error.detail ?? error.code))
        }
        guard grantType == AdminGrantVerifier.grantType else {
            return responder.respond(Self.oauthError(400, "unsupported_grant_type", "grant_type must be \(AdminGrantVerifier.grantType)"))
        }
        guard let assertion = given else {
            return responder.respond(Self.oauthError(400, "invalid_request", "no assertion"))
        }
        let service = context.service
        context.work.async {
            do {
                _ = try verifier.verify(assertion)
                let now = service.clock()
                let token = try service.operatorToken(now: now, lifetime: Self.accessTokenLifetime)
                var response = JSONResponse.make(.object([
                    "access_token": .string(token),
                    "expires_in": .int(Self.accessTokenLifetime),
                    "token_type": .string("Bearer"),
                ]), options: .defaults, render: false)
                response.headers.add("Cache-Control", "no-store")
                responder.respond(response)
            } catch let failure as AdminGrantVerifier.Failure {
                responder.respond(Self.oauthError(400, "invalid_grant", failure.description))
            } catch {
                responder.respond(Self.oauthError(500, "server_error", "cannot mint the token"))
            }
        }
    }
}

extension HearthService {
    /// The verifier over `adminServiceAccounts`; nil when none are listed. A file that
    /// cannot be used stops the start with its path and the reason.
    static func adminGrant(_ configuration: HearthConfiguration) throws(StartupError) -> AdminGrantVerifier? {
        guard !configuration.adminServiceAccounts.isEmpty else { return nil }
        do {
            return AdminGrantVerifier(accounts: try configuration.adminServiceAccounts.map(AuthContext.loadServiceAccount))
        } catch let error as AuthContext.ServiceAccountFileError {
            throw .adminServiceAccount(error.description)
        } catch {
            throw .adminServiceAccount("\(error)")
        }
    }
}
