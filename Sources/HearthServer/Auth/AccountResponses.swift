import HearthAuth
import HearthHTTP
import HearthJSON
import HearthStore

/// The JSON shapes shared by the account endpoints (spec §4.1).
enum AccountResponses {
    static func sessionFields(_ session: Session) -> [JSONKey: JSONValue] {
        var fields: [JSONKey: JSONValue] = [
            "localId": .string(session.user.uid),
            "idToken": .string(session.idToken),
            "refreshToken": .string(session.refreshToken),
            "expiresIn": .string(String(session.expiresIn)),
        ]
        if let email = session.user.email { fields["email"] = .string(email) }
        return fields
    }

    static func signUpResponse(_ session: Session) -> JSONValue {
        var fields = sessionFields(session)
        fields["kind"] = .string("identitytoolkit#SignupNewUserResponse")
        return .object(fields)
    }

    /// A user as `accounts:lookup` shows it; never the password hash.
    static func userInfo(_ user: UserRecord) -> JSONValue {
        var fields: [JSONKey: JSONValue] = [
            "localId": .string(user.uid),
            "emailVerified": .bool(user.emailVerified),
            "disabled": .bool(user.disabled),
            "createdAt": .string(String(user.createdAt)),
            "validSince": .string(String(user.validSince)),
            "providerUserInfo": .array(user.email.map {
                [.object(["providerId": .string("password"), "federatedId": .string($0), "rawId": .string($0), "email": .string($0)])]
            } ?? []),
        ]
        if let email = user.email { fields["email"] = .string(email) }
        if let name = user.displayName { fields["displayName"] = .string(name) }
        if let url = user.photoURL { fields["photoUrl"] = .string(url) }
        if let last = user.lastLoginAt { fields["lastLoginAt"] = .string(String(last)) }
        if let changed = user.passwordUpdatedAt { fields["passwordUpdatedAt"] = .int(changed) }
        if let claims = user.customClaims { fields["customAttributes"] = .string(claims) }
        return .object(fields)
    }
}
