import HearthJSON
import HearthStore

/// The Identity Toolkit's view of a user (docs/protocol/auth.md §4.1), shared by
/// `accounts:lookup`, `accounts:update`, the Admin SDKs' user management and the console.
extension AccountService {
    /// A user as `accounts:lookup` shows it; never the password hash.
    public static func userInfo(_ user: UserRecord) -> JSONValue {
        var fields: [JSONKey: JSONValue] = [
            "localId": .string(user.uid),
            "emailVerified": .bool(user.emailVerified),
            "disabled": .bool(user.disabled),
            "createdAt": .string(String(user.createdAt)),
            "validSince": .string(String(user.validSince)),
            "providerUserInfo": .array(providerUserInfo(user)),
        ]
        if let email = user.email { fields["email"] = .string(email) }
        if let name = user.displayName { fields["displayName"] = .string(name) }
        if let url = user.photoURL { fields["photoUrl"] = .string(url) }
        if let last = user.lastLoginAt { fields["lastLoginAt"] = .string(String(last)) }
        if let changed = user.passwordUpdatedAt { fields["passwordUpdatedAt"] = .int(changed) }
        if let claims = user.customClaims { fields["customAttributes"] = .string(claims) }
        return .object(fields)
    }

    /// The password entry (an email with a password, or an email only on an account that
    /// never came from a provider, as before providers existed), then each linked provider's.
    static func providerUserInfo(_ user: UserRecord) -> [JSONValue] {
        var entries: [JSONValue] = []
        if let email = user.email, user.passwordHash != nil || (user.providerLinks.isEmpty && user.provider != .federated) {
            entries.append(["providerId": "password", "federatedId": .string(email), "rawId": .string(email), "email": .string(email)])
        }
        return entries + user.providerLinks.map(providerInfo)
    }
}
