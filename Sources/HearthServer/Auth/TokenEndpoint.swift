import HearthAccounts
import HearthHTTP
import HearthJSON

/// `POST /v1/token` and `/securetoken.googleapis.com/v1/token` (docs/protocol/auth.md
/// §4.1): exchanges a refresh token (rotated on every use) for a new ID token. Form-encoded
/// or JSON; the answer uses snake_case.
struct TokenEndpoint {
    let context: AuthContext

    static func matches(_ path: String) -> Bool {
        path == "/v1/token" || path == "/securetoken.googleapis.com/v1/token"
    }

    func handle(_ request: HTTPRequest, responder: HTTPResponder) {
        guard request.method == "POST" else { return responder.respond(AuthError("METHOD_NOT_ALLOWED", kind: .methodNotAllowed).response) }
        let body: AuthRequestBody
        do { body = try AuthRequestBody(request) } catch { return responder.respond(error.response) }
        let grantType: String?
        do { grantType = try body.string("grantType") } catch { return responder.respond(error.response) }
        guard grantType == "refresh_token" else { return responder.respond(AuthError.invalidGrantType.response) }
        let service = context.service
        context.work.async {
            do throws(AuthError) {
                let session = try service.refresh(try body.string("refreshToken"))
                responder.respond(JSONResponse.make(.object([
                    "expires_in": .string(String(session.expiresIn)),
                    "token_type": .string("Bearer"),
                    "refresh_token": .string(session.refreshToken),
                    "id_token": .string(session.idToken),
                    "access_token": .string(session.idToken),
                    "user_id": .string(session.user.uid),
                    "project_id": .string(service.settings.projectID),
                ]), options: .defaults, render: false))
            } catch {
                responder.respond(error.response)
            }
        }
    }
}
