import HearthJSON
import HearthStore

/// The identity of an operator's token (`hearth token --admin`, minted only by the CLI):
/// its custom claim and its uid, which no account may take (an import refuses them too).
public enum OperatorIdentity {
    /// The custom claim that marks an operator's token.
    public static let claim = "hearth_admin"
    /// The uid of an operator's token.
    public static let uid = "hearth-admin"
}

extension AccountService {
    /// An operator's ID token (`hearth token --admin`, the admin grant of
    /// `adminServiceAccounts`): signed like a user's, for `OperatorIdentity.uid` with
    /// `OperatorIdentity.claim`; no account row stands behind it.
    public func operatorToken(now: Int64, lifetime: Int64? = nil) throws(AuthError) -> String {
        let identity = UserRecord(uid: OperatorIdentity.uid, provider: .password, createdAt: now, validSince: 0)
        return try idToken(for: identity, now: now, lifetime: lifetime, extraClaims: [JSONKey(OperatorIdentity.claim): .bool(true)])
    }
}
