import HearthAccounts
import HearthAuth
import HearthHTTP
import HearthJSON

/// `accounts:signUp` (docs/protocol/auth.md §4.1): anonymous when neither email nor
/// password is given; with an `idToken`, links that account to email/password keeping its
/// uid.
enum SignUpEndpoint {
    static func handle(_ body: AuthRequestBody, _ request: HTTPRequest, route: AccountsRoute, responder: HTTPResponder) throws(AuthError) {
        let service = route.context.service
        if let idToken = try body.string("idToken") {
            return route.run(hashing: true, responder) { () throws(AuthError) -> JSONValue in
                let (user, authTime) = try service.signedIn(forIDToken: idToken)
                var changes = AccountService.Changes()
                changes.email = try body.string("email")
                changes.password = try body.string("password")
                try service.requireRecentSignIn(user, authTime: authTime, for: changes)
                let (linked, session) = try service.update(uid: user.uid, changes)
                route.context.authenticator.invalidate(user.uid)
                return AccountResponses.signUpResponse(session ?? Session(user: linked, idToken: idToken, refreshToken: "", expiresIn: 0))
            }
        }
        let email = try body.string("email"), password = try body.string("password")
        if let retry = route.context.limitSignUp(address: request.remoteAddress, account: email) { return responder.respond(retry.response) }
        if email == nil && password == nil {
            return route.run(hashing: false, responder) { () throws(AuthError) -> JSONValue in
                AccountResponses.signUpResponse(try service.signUpAnonymously())
            }
        }
        return route.run(hashing: true, responder) { () throws(AuthError) -> JSONValue in
            AccountResponses.signUpResponse(try service.signUp(email: email, password: password, displayName: try body.string("displayName")))
        }
    }
}
