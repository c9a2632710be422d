import HearthAccounts
import HearthAuth
import HearthHTTP
import HearthJSON

/// `accounts:lookup` (docs/protocol/auth.md §4.1): the signed-in user, never their password
/// hash.
enum LookupEndpoint {
    static func handle(_ body: AuthRequestBody, _ request: HTTPRequest, route: AccountsRoute, responder: HTTPResponder) throws(AuthError) {
        let service = route.context.service
        return route.run(hashing: false, responder) { () throws(AuthError) -> JSONValue in
            let user = try service.user(forIDToken: try body.string("idToken"))
            return .object(["kind": .string("identitytoolkit#GetAccountInfoResponse"), "users": .array([AccountService.userInfo(user)])])
        }
    }
}
