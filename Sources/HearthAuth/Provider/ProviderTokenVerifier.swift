import HearthJSON

/// Verifies an identity provider's OpenID Connect ID token: Google's, Apple's,
/// any OIDC issuer's, or a Firebase project's. The checks, in order, each failure its own
/// `ProviderTokenFailure`: a compact JWT (at most `TokenVerifier.maxTokenBytes`, no `crit`);
/// `alg` RS256 or ES256 (checked before a key is touched); `kid` names one of `keys`, of
/// that algorithm, and the signature verifies; `iss` is one of `issuers`; `aud` (a string,
/// or an array) holds one of `audiences`; `sub` a string of 1…`TokenVerifier.maxSubjectLength`;
/// `exp` after now − `clockSkew`, `iat` not after now + `clockSkew`; when `maxLifetime` is
/// set, `exp − iat` at most `maxLifetime + clockSkew`.
public struct ProviderTokenVerifier: Sendable {
    /// How far the provider's clock and ours may disagree, seconds.
    public static let clockSkew: Int64 = 60
    /// The lifetime of a Firebase project's ID tokens, seconds: Firebase issues them for
    /// one hour, and they are bearer credentials for data here (not only exchanged once at
    /// sign-in), so a longer-lived one is refused, as Hearth refuses its own
    /// (`TokenVerifier.maxLifetime`).
    public static let firebaseProjectMaxLifetime: Int64 = 3600

    public let keys: [String: ProviderKey]
    public let issuers: [String]
    public let audiences: [String]
    public let clock: UnixClock
    /// The longest `exp − iat` accepted (plus `clockSkew`), seconds; nil: not checked (a
    /// provider's token exchanged once at sign-in, whatever lifetime its issuer gives it).
    public let maxLifetime: Int64?

    public init(keys: [String: ProviderKey], issuers: [String], audiences: [String], clock: UnixClock = .system,
                maxLifetime: Int64? = nil) {
        (self.keys, self.issuers, self.audiences, self.clock, self.maxLifetime) = (keys, issuers, audiences, clock, maxLifetime)
    }

    /// The `kid` of a token's header, unverified (to refresh the keys when it is unknown).
    public static func keyID(of token: String) -> String? {
        DecodedJWT(token)?.header["kid"]?.stringValue
    }

    /// The claims of `token` when every check passes.
    public func verify(_ token: String) throws(ProviderTokenFailure) -> [JSONKey: JSONValue] {
        guard let jwt = DecodedJWT(token) else { throw .malformed }
        guard let name = jwt.header["alg"]?.stringValue, let algorithm = ProviderKey.Algorithm(rawValue: name) else {
            throw .unsupportedAlgorithm
        }
        guard let kid = jwt.header["kid"]?.stringValue else { throw .missingKeyID }
        guard let key = keys[kid] else { throw .unknownKeyID }
        guard key.verify(jwt.signature, for: jwt.signingInput, algorithm: algorithm) else { throw .badSignature }
        let claims = jwt.claims
        guard let issuer = claims["iss"]?.stringValue, issuers.contains(issuer) else { throw .wrongIssuer }
        let audience: [String]
        switch claims["aud"] {
        case .string(let one)?: audience = [one]
        case .array(let many)?: audience = many.compactMap(\.stringValue)
        default: audience = []
        }
        guard audience.contains(where: audiences.contains) else { throw .wrongAudience }
        guard let sub = claims["sub"]?.stringValue, (1...TokenVerifier.maxSubjectLength).contains(sub.utf16.count) else {
            throw .invalidSubject
        }
        guard let exp = CustomTokenVerifier.seconds(claims["exp"]), let iat = CustomTokenVerifier.seconds(claims["iat"]) else {
            throw .missingTimes
        }
        let now = clock.now()
        guard exp > now - Self.clockSkew else { throw .expired }
        guard iat <= now + Self.clockSkew else { throw .issuedInFuture }
        if let maxLifetime {
            let (lifetime, overflow) = exp.subtractingReportingOverflow(iat)
            guard !overflow, lifetime >= 0, lifetime <= maxLifetime + Self.clockSkew else { throw .lifetimeTooLong }
        }
        return claims
    }
}

/// Why a provider's ID token was refused: the reason after `INVALID_IDP_RESPONSE : `.
/// Texts name no claim value (the token is a credential).
public enum ProviderTokenFailure: Error, Sendable, Equatable, CustomStringConvertible {
    case malformed
    case unsupportedAlgorithm
    case missingKeyID
    case unknownKeyID
    case badSignature
    case wrongIssuer
    case wrongAudience
    case invalidSubject
    case missingTimes
    case expired
    case issuedInFuture
    /// `exp − iat` is longer than the verifier's `maxLifetime` (plus `clockSkew`), or negative.
    case lifetimeTooLong

    public var description: String {
        switch self {
        case .malformed: return "the id_token is not a JWT"
        case .unsupportedAlgorithm: return "the id_token must be signed with RS256 or ES256"
        case .missingKeyID: return "the id_token has no kid"
        case .unknownKeyID: return "the id_token's kid is not one of the provider's keys"
        case .badSignature: return "the id_token's signature does not verify"
        case .wrongIssuer: return "the id_token's iss is not the provider's issuer"
        case .wrongAudience: return "the id_token's aud is not one of the provider's audiences"
        case .invalidSubject: return "the id_token has no valid sub"
        case .missingTimes: return "the id_token has no numeric iat and exp"
        case .expired: return "the id_token has expired"
        case .issuedInFuture: return "the id_token's iat is in the future"
        case .lifetimeTooLong: return "the id_token lives longer than its issuer's tokens may"
        }
    }
}
