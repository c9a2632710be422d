import HearthAccounts
import HearthAuth
import HearthHTTP
import HearthJSON

/// `accounts:signInWithIdp` (v3: `verifyAssertion`): an identity provider's ID
/// token, in `postBody` (`id_token=…&providerId=…&nonce=…`, form-encoded as the SDKs send
/// it), signs its user in, creates one, or (with `idToken`) links it to the signed-in user.
/// Limited per address like the other sign-ins.
enum SignInWithIdpEndpoint {
    /// The longest `postBody` read.
    static let maxPostBodyBytes = 16 * 1024

    static func handle(_ body: AuthRequestBody, _ request: HTTPRequest, route: AccountsRoute, responder: HTTPResponder) throws(AuthError) {
        let service = route.context.service
        if let retry = route.context.limitSignIn(address: request.remoteAddress, account: nil) { return responder.respond(retry.response) }
        let postBody = try body.string("postBody") ?? ""
        guard postBody.utf8.count <= maxPostBodyBytes else {
            return responder.respond(AuthError(AccountService.invalidIdPResponse, detail: "postBody is longer than \(maxPostBodyBytes) bytes").response)
        }
        let form = parseForm(postBody)
        let providerID: String?
        if let given = form["providerId"] { providerID = given } else { providerID = try body.string("providerId") }
        if form["id_token"] == nil, form["access_token"] != nil || form["code"] != nil {
            return responder.respond(AuthError(AccountService.invalidIdPResponse,
                                               detail: "only an id_token is accepted (not an access_token or code)").response)
        }
        let idpRequest = AccountService.IdPRequest(providerID: providerID, idToken: form["id_token"], nonce: form["nonce"],
                                                   linkTo: try body.string("idToken").flatMap { $0.isEmpty ? nil : $0 })
        let returnCredential = try body.bool("returnIdpCredential") ?? false
        let authenticator = route.context.authenticator
        // A token naming a key the provider's keys lack waits for their fetch as a callback,
        // holding no work thread (the sign-in then finds the keys, or the fetch failed).
        if let providers = service.identityProviders, let id = providerID, id != IdentityProvider.firebase,
           let token = idpRequest.idToken, providers.needsKeyFetch(token, provider: id) {
            return providers.whenKeysFetched(for: token, provider: id) {
                signIn(idpRequest, returnCredential: returnCredential, service: service, authenticator: authenticator, route: route, responder: responder)
            }
        }
        signIn(idpRequest, returnCredential: returnCredential, service: service, authenticator: authenticator, route: route, responder: responder)
    }

    private static func signIn(_ idpRequest: AccountService.IdPRequest, returnCredential: Bool, service: AccountService,
                               authenticator: Authenticator, route: AccountsRoute, responder: HTTPResponder) {
        route.run(hashing: false, responder) { () throws(AuthError) -> JSONValue in
            let outcome = try service.signIn(idp: idpRequest)
            var fields: [JSONKey: JSONValue] = [
                "kind": "identitytoolkit#VerifyAssertionResponse",
                "providerId": .string(outcome.link.providerID),
                "federatedId": AccountService.providerInfo(outcome.link).objectValue?["federatedId"] ?? .string(outcome.link.rawID),
                "emailVerified": .bool(outcome.emailVerified),
                "rawUserInfo": .string(JSONWriter.string(.object(outcome.claims))),
            ]
            if let email = outcome.link.email { fields["email"] = .string(email) }
            if let name = outcome.link.displayName { fields["displayName"] = .string(name) }
            if let photo = outcome.link.photoURL { fields["photoUrl"] = .string(photo) }
            if returnCredential || outcome.needConfirmation, let token = idpRequest.idToken { fields["oauthIdToken"] = .string(token) }
            if outcome.needConfirmation {
                fields["needConfirmation"] = true
                return .object(fields)
            }
            guard let session = outcome.session else { throw .internalError }
            authenticator.invalidate(session.user.uid)
            fields.merge(AccountResponses.sessionFields(session)) { $1 }
            fields["localId"] = .string(session.user.uid)
            fields["isNewUser"] = .bool(outcome.isNewUser)
            if let name = session.user.displayName { fields["displayName"] = .string(name) }
            return .object(fields)
        }
    }

    /// `application/x-www-form-urlencoded` pairs (the last of a repeated name wins).
    static func parseForm(_ text: String) -> [String: String] {
        var pairs: [String: String] = [:]
        for part in text.split(separator: "&") {
            let pieces = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = PercentEncoding.decode(Array(pieces[0].utf8), plusIsSpace: true), !name.isEmpty else { continue }
            let value = pieces.count > 1 ? PercentEncoding.decode(Array(pieces[1].utf8), plusIsSpace: true) : ""
            if let value { pairs[name] = value }
        }
        return pairs
    }
}
