import HearthAccounts
import HearthAuth
import HearthHTTP
import HearthJSON

/// `accounts:signInWithPassword` (docs/protocol/auth.md §4.1): one error for unknown email
/// and wrong password.
enum SignInEndpoint {
    static func handle(_ body: AuthRequestBody, _ request: HTTPRequest, route: AccountsRoute, responder: HTTPResponder) throws(AuthError) {
        let service = route.context.service
        let email = try body.string("email")
        let address = request.remoteAddress
        if let retry = route.context.limitSignIn(address: address, account: email) { return responder.respond(retry.response) }
        let context = route.context
        return route.run(hashing: true, responder) { () throws(AuthError) -> JSONValue in
            let session = try service.signIn(email: email, password: try body.string("password"))
            if let email { context.signedIn(account: email, address: address) }
            var fields = AccountResponses.sessionFields(session)
            fields["kind"] = .string("identitytoolkit#VerifyPasswordResponse")
            fields["registered"] = .bool(true)
            fields["displayName"] = .string(session.user.displayName ?? "")
            return .object(fields)
        }
    }
}
