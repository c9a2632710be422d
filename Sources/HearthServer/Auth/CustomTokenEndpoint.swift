import HearthAccounts
import HearthAuth
import HearthHTTP
import HearthJSON

/// `accounts:signInWithCustomToken` (v3: `verifyCustomToken`): a custom token
/// from the app's own backend signs its user in, creating the account on first use.
/// Limited per address like the other sign-ins.
enum CustomTokenEndpoint {
    static func handle(_ body: AuthRequestBody, _ request: HTTPRequest, route: AccountsRoute, responder: HTTPResponder) throws(AuthError) {
        let service = route.context.service
        if let retry = route.context.limitSignIn(address: request.remoteAddress, account: nil) { return responder.respond(retry.response) }
        // firebase-admin's unsigned emulator-mode tokens: only in the emulator mode, and
        // only straight from this machine (not forwarded by a proxy on it).
        let allowUnsigned = service.settings.acceptEmulatorOwner && LocalOnlyCredentials.isDirectLocal(request)
        return route.run(hashing: false, responder) { () throws(AuthError) -> JSONValue in
            let (session, isNew) = try service.signIn(customToken: try body.string("token"), allowUnsigned: allowUnsigned)
            var fields = AccountResponses.sessionFields(session)
            fields["kind"] = .string("identitytoolkit#VerifyCustomTokenResponse")
            fields["isNewUser"] = .bool(isNew)
            return .object(fields)
        }
    }
}
