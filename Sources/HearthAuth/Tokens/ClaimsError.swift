/// Why `IDTokenClaims` could not build a claims set. Names only; never claim values.
public enum ClaimsError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The uid (`sub`) is empty or longer than `TokenVerifier.maxSubjectLength`.
    case invalidUID
    /// The project id is empty.
    case invalidProjectID
    /// The lifetime is outside `IDTokenClaims.lifetimeRange`.
    case invalidLifetime
    /// Custom claims are not a JSON object.
    case customClaimsNotAnObject
    /// A custom claim uses a reserved name (`IDTokenClaims.reservedClaimNames`).
    case reservedClaim(String)
    /// The custom claims serialise to more than `IDTokenClaims.maxCustomClaimsBytes`.
    case customClaimsTooLarge

    public var description: String {
        switch self {
        case .invalidUID: return "uid must be 1 to \(TokenVerifier.maxSubjectLength) characters"
        case .invalidProjectID: return "project id must not be empty"
        case .invalidLifetime: return "token lifetime must be in \(IDTokenClaims.lifetimeRange) seconds"
        case .customClaimsNotAnObject: return "custom claims must be a JSON object"
        case .reservedClaim(let name): return "custom claim name '\(name)' is reserved"
        case .customClaimsTooLarge: return "custom claims must not exceed \(IDTokenClaims.maxCustomClaimsBytes) bytes"
        }
    }
}
