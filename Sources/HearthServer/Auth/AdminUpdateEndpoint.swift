import HearthAccounts
import HearthAuth
import HearthHTTP
import HearthJSON

/// `POST …/projects/P/accounts:update` (Admin SDK `update_user`, `set_custom_user_claims`,
/// `revoke_refresh_tokens`): `localId` and any of `email`, `password`, `displayName`,
/// `photoUrl`, `deleteAttribute` (`DISPLAY_NAME`, `PHOTO_URL`), `emailVerified`,
/// `disableUser`, `validSince` (seconds), `customAttributes` (a JSON object as a string,
/// checked by `CustomClaimsPolicy`; `"{}"` clears). Answers the user with `localId`; no
/// session. `deleteProvider` unlinks identity providers; `["phone"]` is accepted
/// and does nothing (there are none), `password` is refused.
enum AdminUpdateEndpoint {
    static func handle(_ body: AuthRequestBody, route: AccountsRoute, responder: HTTPResponder) throws(AuthError) {
        let changes: AccountService.Changes
        let uid: String
        do throws(AuthError) {
            guard let localId = try body.string("localId") else { throw AuthError("MISSING_LOCAL_ID") }
            uid = localId
            changes = try Self.changes(body)
        } catch {
            return responder.respond(error.response)
        }
        let context = route.context
        route.run(hashing: changes.password != nil, responder) { () throws(AuthError) -> JSONValue in
            let user = try context.service.updateAsAdmin(uid: uid, changes)
            context.authenticator.invalidate(uid)
            var fields = AccountService.userInfo(user).objectValue ?? [:]
            fields["kind"] = .string("identitytoolkit#SetAccountInfoResponse")
            return .object(fields)
        }
    }

    static func changes(_ body: AuthRequestBody) throws(AuthError) -> AccountService.Changes {
        if try body.string("phoneNumber") != nil { throw .phoneNumbersUnsupported }
        var changes = try UpdateEndpoint.profileChanges(body)
        changes.emailVerified = try body.bool("emailVerified")
        changes.disabled = try body.bool("disableUser")
        if body.value("validSince") != nil {
            guard let seconds = try body.int("validSince") else { throw AuthError("INVALID_ARGUMENT", detail: "validSince must be an integer") }
            changes.validSince = seconds
        }
        if let claims = body.value("customAttributes"), claims != .string("") {
            changes.customClaims = try CustomClaimsPolicy.parse(claims)
        }
        return changes
    }
}
