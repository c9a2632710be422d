import HearthJSON

/// Custom tokens: what an app's own backend mints so its users sign in with
/// `signInWithCustomToken` (docs/protocol/auth.md §4.3: RS256 JWTs from firebase-admin's
/// `create_custom_token`, `aud` the Identity Toolkit URL below, `iss` = `sub` = the service
/// account's email, `uid`, optional `claims`, at most an hour).
///
/// Trusted signers: Hearth's own Ed25519 keys (`EdDSA`, `iss` = `sub` = `hearthIssuer`,
/// minted by `hearth token --custom`), the service accounts the operator configured
/// (`RS256`, by `iss`), and, only when `allowUnsigned` (the emulator-compatibility mode,
/// from loopback), the unsigned tokens firebase-admin makes in emulator mode (`alg: none`).
public struct CustomTokenVerifier: Sendable {
    public static let audience = "https://identitytoolkit.googleapis.com/google.identity.identitytoolkit.v1.IdentityToolkit"
    /// `iss` and `sub` of Hearth's own custom tokens.
    public static let hearthIssuer = "hearth-custom-token"
    /// The longest lifetime (`exp - iat`) accepted, seconds (Firebase: one hour).
    public static let maxLifetime: Int64 = 3600
    /// The longest `uid`, characters (Firebase: 128).
    public static let maxUIDLength = 128
    /// Claim names a custom token may not carry in `claims`: every name an ID token writes
    /// itself, `firebase`, and Hearth's admin marker.
    public let reservedClaims: Set<String>

    public let hearthKeys: [String: VerifyingKey]
    /// By service-account email.
    public let serviceAccounts: [String: ServiceAccountKey]
    public let allowUnsigned: Bool
    public let clock: UnixClock
    public let leeway: Int64

    public init(hearthKeys: [String: VerifyingKey], serviceAccounts: [ServiceAccountKey], allowUnsigned: Bool,
                reservedClaims: Set<String>, clock: UnixClock, leeway: Int64 = TokenVerifier.defaultLeeway) {
        self.hearthKeys = hearthKeys
        self.serviceAccounts = Dictionary(serviceAccounts.map { ($0.clientEmail, $0) }, uniquingKeysWith: { first, _ in first })
        self.allowUnsigned = allowUnsigned
        self.reservedClaims = reservedClaims
        self.clock = clock
        self.leeway = leeway
    }

    /// What a valid custom token says.
    public struct Verified: Sendable, Equatable {
        public var uid: String
        public var claims: [JSONKey: JSONValue]
    }

    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        case malformed
        case unsupportedAlgorithm
        case unsignedNotAllowed
        case unknownSigner
        case badSignature
        case wrongAudience
        case issuerIsNotSubject
        case missingUID
        case expired
        case issuedInFuture
        case lifetimeTooLong
        case reservedClaim(String)
        case claimsTooLarge

        public var description: String {
            switch self {
            case .malformed: return "not a JWT"
            case .unsupportedAlgorithm: return "the algorithm must be RS256 (a service account) or EdDSA (Hearth)"
            case .unsignedNotAllowed: return "unsigned tokens are accepted only in emulator mode, from loopback"
            case .unknownSigner: return "the signer is not trusted"
            case .badSignature: return "the signature does not verify"
            case .wrongAudience: return "aud must be \(CustomTokenVerifier.audience)"
            case .issuerIsNotSubject: return "iss and sub must be the signer"
            case .missingUID: return "uid must be a string of 1-\(CustomTokenVerifier.maxUIDLength) characters"
            case .expired: return "the token has expired"
            case .issuedInFuture: return "iat is in the future"
            case .lifetimeTooLong: return "a custom token lives at most \(CustomTokenVerifier.maxLifetime) s"
            case .reservedClaim(let name): return "the claim \(name) is reserved"
            case .claimsTooLarge: return "claims are limited to \(IDTokenClaims.maxCustomClaimsBytes) bytes"
            }
        }
    }

    public func verify(_ token: String) throws(Failure) -> Verified {
        guard let jwt = DecodedJWT(token) else { throw .malformed }
        let (header, claims, signingInput, signature) = (jwt.header, jwt.claims, jwt.signingInput, jwt.signature)
        let issuer = claims["iss"]?.stringValue
        switch header["alg"]?.stringValue {
        case "RS256":
            guard let issuer, let account = serviceAccounts[issuer] else { throw .unknownSigner }
            if let kid = header["kid"]?.stringValue, let keyID = account.keyID, kid != keyID { throw .unknownSigner }
            guard account.key.verify(signature, for: signingInput) else { throw .badSignature }
        case TokenSigner.algorithm:
            guard issuer == Self.hearthIssuer, let kid = header["kid"]?.stringValue, let key = hearthKeys[kid] else { throw .unknownSigner }
            guard key.isValidSignature(signature, for: signingInput) else { throw .badSignature }
        case "none":
            guard allowUnsigned else { throw .unsignedNotAllowed }
            guard signature.isEmpty else { throw .malformed }
        default:
            throw .unsupportedAlgorithm
        }
        guard claims["aud"] == .string(Self.audience) else { throw .wrongAudience }
        guard let issuer, claims["sub"] == .string(issuer) else { throw .issuerIsNotSubject }
        guard let uid = claims["uid"]?.stringValue, (1...Self.maxUIDLength).contains(uid.count) else { throw .missingUID }
        guard let iat = Self.seconds(claims["iat"]), let exp = Self.seconds(claims["exp"]) else { throw .malformed }
        let now = clock.now()
        guard exp > now - leeway else { throw .expired }
        guard iat <= now + leeway else { throw .issuedInFuture }
        guard exp - iat <= Self.maxLifetime, exp >= iat else { throw .lifetimeTooLong }
        var extra: [JSONKey: JSONValue] = [:]
        switch claims["claims"] {
        case nil, .null?: break
        case .object(let object)?:
            if let name = object.keys.strings.sorted().first(where: reservedClaims.contains) { throw .reservedClaim(name) }
            guard JSONWriter.write(.object(object)).count <= IDTokenClaims.maxCustomClaimsBytes else { throw .claimsTooLarge }
            extra = object
        default:
            throw .malformed
        }
        return Verified(uid: uid, claims: extra)
    }

    static func seconds(_ value: JSONValue?) -> Int64? {
        switch value {
        case .int(let seconds)?: return seconds
        case .double(let seconds)? where seconds.isFinite && abs(seconds) < 1e15: return Int64(seconds.rounded(.down))
        default: return nil
        }
    }

    /// A custom token for `uid` signed by Hearth's `key` (`hearth token --custom`).
    public static func mint(uid: String, claims: [JSONKey: JSONValue], key: SigningKey, now: Int64,
                            lifetime: Int64 = maxLifetime) throws(TokenSigningError) -> String {
        var payload: [JSONKey: JSONValue] = [
            "iss": .string(hearthIssuer), "sub": .string(hearthIssuer), "aud": .string(audience),
            "uid": .string(uid), "iat": .int(now), "exp": .int(now + lifetime),
        ]
        if !claims.isEmpty { payload["claims"] = .object(claims) }
        return try TokenSigner(key: key).sign(claims: .object(payload))
    }
}

/// A service account's key from its JSON file (`client_email`, `private_key`,
/// `private_key_id`), the signer firebase-admin uses for `create_custom_token`.
public struct ServiceAccountKey: Sendable {
    public let clientEmail: String
    public let keyID: String?
    public let key: RS256Key

    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        case notJSON
        case missing(String)
        case key(RS256Key.KeyError)
        public var description: String {
            switch self {
            case .notJSON: return "not a JSON object"
            case .missing(let field): return "no \(field)"
            case .key(let error): return "private_key: \(error)"
            }
        }
    }

    public init(json bytes: [UInt8]) throws(Failure) {
        guard case .object(let object)? = try? JSONParser.parse(bytes) else { throw .notJSON }
        guard let email = object["client_email"]?.stringValue, !email.isEmpty else { throw .missing("client_email") }
        guard let pem = object["private_key"]?.stringValue else { throw .missing("private_key") }
        do { key = try RS256Key(pem: pem) } catch { throw .key(error) }
        clientEmail = email
        keyID = object["private_key_id"]?.stringValue
    }
}
