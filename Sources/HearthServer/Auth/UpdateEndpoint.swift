import HearthAccounts
import HearthAuth
import HearthHTTP
import HearthJSON

/// `accounts:update` (docs/protocol/auth.md §4.1): email, password, display name, photo; a
/// new password revokes earlier tokens and returns a new session.
enum UpdateEndpoint {
    static func handle(_ body: AuthRequestBody, _ request: HTTPRequest, route: AccountsRoute, responder: HTTPResponder) throws(AuthError) {
        let service = route.context.service
        let hashes = try body.string("password") != nil
        return route.run(hashing: hashes, responder) { () throws(AuthError) -> JSONValue in
            let (user, authTime) = try service.signedIn(forIDToken: try body.string("idToken"))
            let changes = try profileChanges(body)
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
    static func profileChanges(_ body: AuthRequestBody) throws(AuthError) -> AccountService.Changes {
        var changes = AccountService.Changes()
        changes.email = try body.string("email")
        changes.password = try body.string("password")
        changes.displayName = try body.string("displayName")
        changes.photoURL = try body.string("photoUrl")
        let deletions = try body.strings("deleteAttribute")
        changes.deleteDisplayName = deletions.contains("DISPLAY_NAME")
        changes.deletePhotoURL = deletions.contains("PHOTO_URL")
        changes.deleteProviders = try body.strings("deleteProvider")
        return changes
    }
}
