import HearthJSON

/// Turns verified ID-token claims into the `auth` variable of the security rules
/// (docs/protocol/rules.md §3.3):
/// `{"uid": <sub>, "provider": <firebase.sign_in_provider>, "token": <all claims>}`.
///
/// Only ever call this with the result of `TokenVerifier.verify`: the rules trust every field.
public enum RulesAuth {
    /// The `auth` value, or nil when `claims` has no string `sub` (never true for verified
    /// claims). `provider` is left out when the token names none.
    public static func value(fromVerifiedClaims claims: JSONValue) -> JSONValue? {
        guard let members = claims.objectValue, let uid = members["sub"]?.stringValue else { return nil }
        var auth: [JSONKey: JSONValue] = ["uid": .string(uid), "token": claims]
        if let provider = members["firebase"]?.objectValue?["sign_in_provider"], case .string = provider {
            auth["provider"] = provider
        }
        return .object(auth)
    }
}
