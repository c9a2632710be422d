import HearthAccounts
import HearthAuth
import HearthHTTP
import HearthJSON

/// `GET …/projects/P/accounts:batchGet?maxResults=N[&nextPageToken=T]` (Admin SDK
/// `list_users`): users in uid order, `nextPageToken` while more remain. The token is
/// opaque to clients (the last uid shown, base64url). Unlike Firebase, users come without
/// `passwordHash` and `salt`: Hearth's scrypt hashes never leave the server.
enum AdminListEndpoint {
    /// Page size when `maxResults` is not given, as Firebase's.
    static let defaultMaxResults = 20
    /// Largest page, as Firebase's (and the SDKs' `MAX_LIST_USERS_RESULTS`).
    static let maxResultsLimit = 1000

    static func handle(_ body: AuthRequestBody, route: AccountsRoute, responder: HTTPResponder) throws(AuthError) {
        let limit: Int
        let after: String?
        do throws(AuthError) {
            (limit, after) = try page(body)
        } catch {
            return responder.respond(error.response)
        }
        let service = route.context.service
        route.run(hashing: false, responder) { () throws(AuthError) -> JSONValue in
            let (users, next) = try service.listUsers(after: after, limit: limit)
            var fields: [JSONKey: JSONValue] = ["kind": .string("identitytoolkit#DownloadAccountResponse")]
            if !users.isEmpty { fields["users"] = .array(users.map(AccountService.userInfo)) }
            if let next { fields["nextPageToken"] = .string(pageToken(after: next)) }
            return .object(fields)
        }
    }

    static func page(_ body: AuthRequestBody) throws(AuthError) -> (limit: Int, after: String?) {
        var limit = defaultMaxResults
        if body.value("maxResults") != nil {
            guard let given = try body.int("maxResults"), (1...Int64(maxResultsLimit)).contains(given) else {
                throw AuthError("INVALID_ARGUMENT", detail: "maxResults must be 1 to \(maxResultsLimit)")
            }
            limit = Int(given)
        }
        guard let token = try body.string("nextPageToken") else { return (limit, nil) }
        guard let bytes = Base64.decode(token, alphabet: .url, padding: .none), let uid = String(validating: bytes, as: UTF8.self) else {
            throw AuthError("INVALID_PAGE_SELECTION")
        }
        return (limit, uid)
    }

    static func pageToken(after uid: String) -> String {
        Base64.encode(Array(uid.utf8), alphabet: .url, padding: .none)
    }
}
