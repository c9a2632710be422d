import HearthJSON

/// The OAuth2 JWT-bearer grant (RFC 7523) that google-auth's service-account credentials
/// make, checked against the service accounts the operator listed in `adminServiceAccounts`
/// (a Cloud Function's firebase-admin writing back to Hearth outside emulator mode).
///
/// The assertion is an RS256 JWT signed with the account's private key: `iss` its
/// `client_email`, `kid` its `private_key_id`, `aud` the token endpoint, `iat`/`exp` at most
/// an hour apart (google-auth sends exactly one hour, `scope` is ignored). google-auth 2.x
/// always writes Google's endpoint (`googleTokenEndpoint`) in `aud`, whatever the JSON's
/// `token_uri`; an assertion for Hearth's own endpoint (a URL ending in `endpointPath`) is
/// accepted too. Any other `aud` is refused.
public struct AdminGrantVerifier: Sendable {
    /// The `grant_type` of the JWT-bearer grant.
    public static let grantType = "urn:ietf:params:oauth:grant-type:jwt-bearer"
    /// Hearth's token endpoint (put it in the service account's `token_uri`).
    public static let endpointPath = "/oauth2/v4/token"
    /// What google-auth writes in `aud` (`service_account._GOOGLE_OAUTH2_TOKEN_ENDPOINT`).
    public static let googleTokenEndpoint = "https://oauth2.googleapis.com/token"
    /// The longest assertion lifetime (`exp - iat`) accepted, seconds (Google's: one hour).
    public static let maxAssertionLifetime: Int64 = 3600
    /// How far clocks may disagree, seconds (for `iat` in the future and `exp` in the past).
    public static let clockSkew: Int64 = TokenVerifier.defaultLeeway

    public let accounts: [ServiceAccountKey]
    public let clock: UnixClock

    public init(accounts: [ServiceAccountKey], clock: UnixClock = .system) {
        self.accounts = accounts
        self.clock = clock
    }

    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        case malformed
        case unsupportedAlgorithm
        case unknownSigner
        case badSignature
        case wrongAudience
        case expired
        case issuedInFuture
        case lifetimeTooLong

        public var description: String {
            switch self {
            case .malformed: return "the assertion is not a JWT with numeric iat and exp"
            case .unsupportedAlgorithm: return "the assertion must be signed with RS256"
            case .unknownSigner: return "the signer is not one of adminServiceAccounts"
            case .badSignature: return "the signature does not verify"
            case .wrongAudience:
                return "aud must be \(AdminGrantVerifier.googleTokenEndpoint) or a URL ending in \(AdminGrantVerifier.endpointPath)"
            case .expired: return "the assertion has expired"
            case .issuedInFuture: return "iat is in the future"
            case .lifetimeTooLong: return "an assertion lives at most \(AdminGrantVerifier.maxAssertionLifetime) s"
            }
        }
    }

    /// The account that signed a valid `assertion`.
    public func verify(_ assertion: String) throws(Failure) -> ServiceAccountKey {
        guard let jwt = DecodedJWT(assertion) else { throw .malformed }
        let (header, claims) = (jwt.header, jwt.claims)
        guard header["alg"]?.stringValue == "RS256" else { throw .unsupportedAlgorithm }
        // The key named by `kid` when it names one; else the account named by `iss`. Either
        // way `iss` must be that account's email.
        let issuer = claims["iss"]?.stringValue
        let kid = header["kid"]?.stringValue
        let account = accounts.first { kid != nil && $0.keyID == kid } ?? accounts.first { $0.clientEmail == issuer }
        guard let account, let issuer, account.clientEmail == issuer else { throw .unknownSigner }
        if let kid, let keyID = account.keyID, kid != keyID { throw .unknownSigner }
        guard account.key.verify(jwt.signature, for: jwt.signingInput) else { throw .badSignature }
        guard let audience = claims["aud"]?.stringValue, Self.acceptsAudience(audience) else { throw .wrongAudience }
        guard let iat = CustomTokenVerifier.seconds(claims["iat"]), let exp = CustomTokenVerifier.seconds(claims["exp"]) else { throw .malformed }
        let now = clock.now()
        guard exp > now - Self.clockSkew else { throw .expired }
        guard iat <= now + Self.clockSkew else { throw .issuedInFuture }
        guard exp >= iat, exp - iat <= Self.maxAssertionLifetime else { throw .lifetimeTooLong }
        return account
    }

    /// Google's endpoint (what google-auth sends), or an http(s) URL whose path is Hearth's
    /// endpoint (without query or fragment).
    public static func acceptsAudience(_ audience: String) -> Bool {
        if audience == googleTokenEndpoint { return true }
        guard audience.hasPrefix("https://") || audience.hasPrefix("http://"), audience.hasSuffix(endpointPath) else { return false }
        let authority = audience.drop { $0 != ":" }.dropFirst(3).dropLast(endpointPath.count)
        return !authority.isEmpty && !authority.contains { "/?#@ ".contains($0) }
    }
}
