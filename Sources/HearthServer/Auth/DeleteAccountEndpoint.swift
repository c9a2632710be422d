import HearthAccounts
import HearthAuth
import HearthHTTP
import HearthJSON

/// `accounts:delete` (docs/protocol/auth.md §4.1).
enum DeleteAccountEndpoint {
    static func handle(_ body: AuthRequestBody, _ request: HTTPRequest, route: AccountsRoute, responder: HTTPResponder) throws(AuthError) {
        let service = route.context.service
        return route.run(hashing: false, responder) { () throws(AuthError) -> JSONValue in
            let user = try service.user(forIDToken: try body.string("idToken"))
            try service.delete(uid: user.uid)
            route.context.authenticator.invalidate(user.uid)
            return .object(["kind": .string("identitytoolkit#DeleteAccountResponse")])
        }
    }
}
