import HearthAccounts
import HearthAuth
import HearthHTTP
import HearthJSON

/// `accounts:update` (docs/protocol/auth.md §4.1): email, password, display name, photo; a
/// new password revokes earlier tokens and returns a new session.
enum UpdateEndpoint {
    static func handle(_ body: AuthRequestBody, _ request: HTTPRequest, route: AccountsRoute, responder: HTTPResponder) {
        let service = route.context.service
        let hashes = body.string("password") != nil
        return route.run(hashing: hashes, responder) { () throws(AuthError) -> JSONValue in
            let (user, authTime) = try service.signedIn(forIDToken: body.string("idToken"))
            let changes = profileChanges(body)
            try service.requireRecentSignIn(user, authTime: authTime, for: changes)
            let (updated, session) = try service.update(uid: user.uid, changes)
            route.context.authenticator.invalidate(user.uid)
            var fields = AccountService.userInfo(updated).objectValue ?? [:]
            fields["kind"] = .string("identitytoolkit#SetAccountInfoResponse")
            if let session { fields.merge(AccountResponses.sessionFields(session)) { $1 } }
            return .object(fields)
        }
    }

    /// The changes a user may make to their own profile (email, password, display name,
    /// photo, and deleting the last two); admins may change more (AdminUpdateEndpoint).
    static func profileChanges(_ body: AuthRequestBody) -> AccountService.Changes {
        var changes = AccountService.Changes()
        changes.email = body.string("email")
        changes.password = body.string("password")
        changes.displayName = body.string("displayName")
        changes.photoURL = body.string("photoUrl")
        let deletions = body.strings("deleteAttribute")
        changes.deleteDisplayName = deletions.contains("DISPLAY_NAME")
        changes.deletePhotoURL = deletions.contains("PHOTO_URL")
        changes.deleteProviders = body.strings("deleteProvider")
        return changes
    }
}
