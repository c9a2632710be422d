import HearthAccounts
import HearthAuth
import HearthHTTP
import HearthJSON

/// `POST …/projects/P/accounts:lookup` (Admin SDK `get_user`, `get_user_by_email`,
/// `get_users`): `{"localId":[…],"email":[…]}`. Answers `users` in the order asked; with
/// no match `users` is left out (the SDK's `UserNotFoundError`). `federatedUserId`
/// (`[{providerId, rawId}]`, `get_user_by_provider_uid`) matches linked provider accounts;
/// phone numbers match no one. Never password hashes or salts.
enum AdminLookupEndpoint {
    /// Identifiers accepted in one lookup, like Firebase (and the SDKs' `get_users`).
    static let maxIdentifiers = 100

    static func handle(_ body: AuthRequestBody, route: AccountsRoute, responder: HTTPResponder) throws(AuthError) {
        let uids = try body.strings("localId"), emails = try body.strings("email")
        var count = try uids.count + emails.count + body.strings("phoneNumber").count
        var federated: [(providerID: String, rawID: String)] = []
        switch body.value("federatedUserId") {
        case nil, .null?:
            break
        case .array(let entries)?:
            count += entries.count
            // Each entry is `{providerId, rawId}`; one of another shape is refused, not
            // skipped (a lookup that silently asked for less would answer "no such user").
            for entry in entries {
                guard let fields = entry.objectValue, let provider = fields["providerId"]?.stringValue,
                      let raw = fields["rawId"]?.stringValue else {
                    throw AuthError("INVALID_JSON_PAYLOAD", detail: "each federatedUserId must be {\"providerId\": string, \"rawId\": string}")
                }
                federated.append((provider, raw))
            }
        case let other?:
            throw AuthRequestBody.typeMismatch("federatedUserId", expected: "TYPE_MESSAGE", other)
        }
        guard count <= maxIdentifiers else {
            return responder.respond(AuthError("INVALID_ARGUMENT", detail: "at most \(maxIdentifiers) identifiers in one lookup").response)
        }
        let service = route.context.service
        let pairs = federated
        route.run(hashing: false, responder) { () throws(AuthError) -> JSONValue in
            let users = try service.users(uids: uids, emails: emails, federated: pairs)
            var fields: [JSONKey: JSONValue] = ["kind": .string("identitytoolkit#GetAccountInfoResponse")]
            if !users.isEmpty { fields["users"] = .array(users.map(AccountService.userInfo)) }
            return .object(fields)
        }
    }
}
