import HearthJSON

/// Builds the claims of a Firebase-shaped ID token (docs/protocol/auth.md §4.3;
/// docs/design.md §6):
///
///     iss = "https://securetoken.google.com/<projectId>", aud = <projectId>,
///     sub = user_id = <uid>, iat, exp = iat + lifetime, auth_time,
///     email, email_verified, phone_number, name, picture (when set),
///     firebase = {identities: {...}, sign_in_provider: "..."},
///     provider_id = "anonymous" (anonymous users only),
///     <custom claims at the top level>
///
/// Custom claims follow Firebase's rules: a JSON object of at most `maxCustomClaimsBytes`
/// bytes whose names are not reserved. Firebase reserves the OIDC/JWT names plus
/// `firebase`; because custom claims sit beside the identity claims, Hearth also reserves
/// every name this builder writes, so a custom claim can never override `user_id` or
/// `email`.
public struct IDTokenClaims: Sendable, Hashable {
    /// ID tokens live one hour, as Firebase's do (`expiresIn: "3600"`,
    /// docs/protocol/auth.md §4.1).
    public static let defaultLifetime: Int64 = 3600
    /// The longest lifetime (`exp − iat`) Hearth issues, in seconds: Firebase never issues
    /// more than an hour. `TokenVerifier` refuses any longer-lived token, even correctly
    /// signed, so a leaked signing key or a mistaken minting tool cannot make credentials
    /// that outlive a revocation check by days.
    public static let maxLifetime: Int64 = 3600
    /// Lifetimes accepted, in seconds.
    public static let lifetimeRange: ClosedRange<Int64> = 1...maxLifetime
    /// The custom-claims size limit Firebase enforces (`setCustomUserClaims`), measured here
    /// on the compact JSON that `JSONWriter` produces.
    public static let maxCustomClaimsBytes = 1000
    /// `iss` is this prefix followed by the project id.
    public static let issuerPrefix = "https://securetoken.google.com/"
    /// Names custom claims may not use (see the type's comment).
    public static let reservedClaimNames: Set<String> = [
        // Firebase Admin SDK's reserved list.
        "acr", "amr", "at_hash", "aud", "auth_time", "azp", "cnf", "c_hash", "exp", "iat", "iss", "jti",
        "nbf", "nonce", "sub", "firebase",
        // Written by this builder.
        "user_id", "email", "email_verified", "phone_number", "name", "picture", "provider_id",
    ]
    /// The `sign_in_provider` of anonymous users (which also get `provider_id: "anonymous"`).
    public static let anonymousProvider = "anonymous"
    /// The `sign_in_provider` of a custom-token sign-in.
    public static let customProvider = "custom"

    public var projectID: String
    public var uid: String
    /// `iat`, seconds since the epoch.
    public var issuedAt: Int64
    /// `auth_time`: when the user last actually signed in (refreshes keep it).
    public var authTime: Int64
    public var lifetime: Int64
    /// `firebase.sign_in_provider`: `"password"`, `"anonymous"`, `"custom"`, ….
    public var signInProvider: String
    public var email: String?
    public var emailVerified: Bool
    public var phoneNumber: String?
    public var name: String?
    public var picture: String?
    /// `firebase.identities`; nil means "derive": `{"email": [email]}` and
    /// `{"phone": [phoneNumber]}` for whichever is set (as the emulator does).
    public var identities: [String: [String]]?
    /// Claims merged at the top level (validated by `json()`).
    public var customClaims: [JSONKey: JSONValue]

    public init(
        projectID: String, uid: String, issuedAt: Int64, authTime: Int64? = nil,
        lifetime: Int64 = defaultLifetime, signInProvider: String,
        email: String? = nil, emailVerified: Bool = false, phoneNumber: String? = nil,
        name: String? = nil, picture: String? = nil,
        identities: [String: [String]]? = nil, customClaims: [JSONKey: JSONValue] = [:]
    ) {
        self.projectID = projectID
        self.uid = uid
        self.issuedAt = issuedAt
        self.authTime = authTime ?? issuedAt
        self.lifetime = lifetime
        self.signInProvider = signInProvider
        self.email = email
        self.emailVerified = emailVerified
        self.phoneNumber = phoneNumber
        self.name = name
        self.picture = picture
        self.identities = identities
        self.customClaims = customClaims
    }

    /// `iss` for `projectID`.
    public var issuer: String { Self.issuerPrefix + projectID }

    /// The claims object to hand to `TokenSigner.sign(claims:)`.
    public func json() throws(ClaimsError) -> JSONValue {
        guard !projectID.isEmpty else { throw .invalidProjectID }
        guard (1...TokenVerifier.maxSubjectLength).contains(uid.utf16.count) else { throw .invalidUID }
        guard Self.lifetimeRange.contains(lifetime) else { throw .invalidLifetime }
        var claims = try Self.validateCustomClaims(.object(customClaims))

        claims["iss"] = .string(issuer)
        claims["aud"] = .string(projectID)
        claims["auth_time"] = .int(authTime)
        claims["user_id"] = .string(uid)
        claims["sub"] = .string(uid)
        claims["iat"] = .int(issuedAt)
        claims["exp"] = .int(issuedAt + lifetime)
        if let email {
            claims["email"] = .string(email)
            claims["email_verified"] = .bool(emailVerified)
        }
        if let phoneNumber { claims["phone_number"] = .string(phoneNumber) }
        if let name { claims["name"] = .string(name) }
        if let picture { claims["picture"] = .string(picture) }
        if signInProvider == Self.anonymousProvider { claims["provider_id"] = .string(Self.anonymousProvider) }

        var derived: [String: [String]] = [:]
        if let email { derived["email"] = [email] }
        if let phoneNumber { derived["phone"] = [phoneNumber] }
        let identityValues = (identities ?? derived).mapValues { JSONValue.array($0.map(JSONValue.string)) }
        claims["firebase"] = ["identities": .object(Dictionary(uniqueKeysWithValues: identityValues.map { (JSONKey($0.key), $0.value) })), "sign_in_provider": .string(signInProvider)]
        return .object(claims)
    }

    /// Checks custom claims as Firebase does when they are set (`accounts:update`
    /// `customAttributes`, docs/protocol/auth.md §4.1): an object, no reserved names, at
    /// most `maxCustomClaimsBytes` of JSON. Returns the members.
    public static func validateCustomClaims(_ claims: JSONValue) throws(ClaimsError) -> [JSONKey: JSONValue] {
        guard let members = claims.objectValue else { throw .customClaimsNotAnObject }
        if let reserved = members.keys.strings.sorted().first(where: reservedClaimNames.contains) {
            throw .reservedClaim(reserved)
        }
        guard JSONWriter.write(claims).count <= maxCustomClaimsBytes else { throw .customClaimsTooLarge }
        return members
    }
}
