import HearthAccounts
import HearthAuth
import HearthHTTP
import HearthJSON

/// `POST …/projects/P/accounts:delete` (Admin SDK `delete_user`): `{"localId": uid}`;
/// answers `kind` (which the SDK requires) or `USER_NOT_FOUND`. And `:batchDelete`
/// (`delete_users`): `{"localIds": […], "force": bool}`; without `force` enabled users
/// are kept and reported in `errors` (`NOT_DISABLED`), as Firebase does; unknown uids are
/// not errors.
enum AdminDeleteEndpoint {
    /// Uids accepted in one batch delete, like Firebase.
    static let maxBatchDelete = 1000

    static func handle(_ body: AuthRequestBody, route: AccountsRoute, responder: HTTPResponder) throws(AuthError) {
        guard let uid = try body.string("localId") else { return responder.respond(AuthError("MISSING_LOCAL_ID").response) }
        let context = route.context
        route.run(hashing: false, responder) { () throws(AuthError) -> JSONValue in
            try context.service.delete(uid: uid)
            context.authenticator.invalidate(uid)
            return .object(["kind": .string("identitytoolkit#DeleteAccountResponse")])
        }
    }

    static func handleBatch(_ body: AuthRequestBody, route: AccountsRoute, responder: HTTPResponder) throws(AuthError) {
        let uids = try body.strings("localIds")
        guard uids.count <= maxBatchDelete else {
            return responder.respond(AuthError("INVALID_ARGUMENT", detail: "at most \(maxBatchDelete) localIds in one batch").response)
        }
        let force = try body.bool("force") ?? false
        let context = route.context
        route.run(hashing: false, responder) { () throws(AuthError) -> JSONValue in
            var errors: [JSONValue] = []
            for (index, uid) in uids.enumerated() {
                guard let user = try context.service.users(uids: [uid], emails: []).first else { continue }
                if !force && !user.disabled {
                    errors.append(.object(["index": .int(Int64(index)), "localId": .string(uid),
                                           "message": .string("NOT_DISABLED : Disable the account before batch deletion.")]))
                    continue
                }
                do throws(AuthError) {
                    try context.service.delete(uid: uid)
                } catch where error == .userNotFound {
                    // deleted meanwhile: not an error
                }
                context.authenticator.invalidate(uid)
            }
            var fields: [JSONKey: JSONValue] = ["kind": .string("identitytoolkit#BatchDeleteAccountsResponse")]
            if !errors.isEmpty { fields["errors"] = .array(errors) }
            return .object(fields)
        }
    }
}
