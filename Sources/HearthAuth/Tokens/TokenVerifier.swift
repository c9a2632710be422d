import HearthJSON

/// Verifies Ed25519-signed JWTs made by `TokenSigner` and returns their claims.
///
/// The checks, in order (each failure is its own `TokenError`):
/// 1. size ≤ `maxTokenBytes`, before anything is decoded;
/// 2. exactly three parts, each strict unpadded base64url (RFC 7515 §7.1, §2);
/// 3. the header is a JSON object with `alg == "EdDSA"` and no `crit`; `alg` is checked
///    before any key is touched, so `none`, `HS256` (including HMAC keyed with our public
///    key) and every other algorithm fail the same way (RFC 8725 §2.1, §3.1);
/// 4. `kid` names a trusted key, and the signature verifies over the exact bytes of
///    `header "." payload`;
/// 5. only then is the payload parsed: a JSON object with a string `sub` of 1…
///    `maxSubjectLength` UTF-16 code units (Firebase's Admin SDKs,
///    docs/protocol/auth.md §4.3, count like JavaScript), numeric `exp` and `iat`;
/// 6. time: `exp` after now − leeway (RFC 7519 §4.1.4: "on or after" is expired), `iat` and (if present) `nbf` not after
///    now + leeway; the lifetime `exp − iat` at most `maxLifetime` (the most Hearth issues);
/// 7. if configured, `aud` and `iss` equal the expected values (Firebase: the project id,
///    and `https://securetoken.google.com/<projectId>`).
public struct TokenVerifier: Sendable {
    /// The longest token accepted, in bytes. Firebase ID tokens are ~1 KB; custom claims
    /// are capped at 1000 bytes (`IDTokenClaims.maxCustomClaimsBytes`), so 8 KiB is ample.
    public static let maxTokenBytes = 8 * 1024
    /// The longest `sub` accepted (docs/protocol/auth.md §4.3), in UTF-16 code units.
    public static let maxSubjectLength = 128
    /// Default clock-skew allowance in seconds between this server and whoever minted or
    /// checks the token: a token is accepted up to this long after its `exp`, and its `iat`
    /// and `nbf` may be up to this far in the future (docs/threat-model.md).
    public static let defaultLeeway: Int64 = 30
    /// The longest lifetime (`exp − iat`) accepted: the most Hearth issues
    /// (`IDTokenClaims.maxLifetime`). Longer-lived tokens are refused even when correctly signed.
    public static let maxLifetime = IDTokenClaims.maxLifetime

    public let publicKeys: [String: VerifyingKey]
    public let clock: UnixClock
    public let leeway: Int64
    /// When set, `aud` must be a string equal to it.
    public let audience: String?
    /// When set, `iss` must be a string equal to it.
    public let issuer: String?

    /// A verifier trusting `publicKeys` (by `kid`).
    public init(
        publicKeys: [String: VerifyingKey], clock: UnixClock = .system, leeway: Int64 = defaultLeeway,
        audience: String? = nil, issuer: String? = nil
    ) {
        precondition(leeway >= 0, "TokenVerifier leeway must not be negative")
        self.publicKeys = publicKeys
        self.clock = clock
        self.leeway = leeway
        self.audience = audience
        self.issuer = issuer
    }

    /// A verifier trusting `keys`, indexed by their own `kid`.
    public init(
        keys: [VerifyingKey], clock: UnixClock = .system, leeway: Int64 = defaultLeeway,
        audience: String? = nil, issuer: String? = nil
    ) {
        self.init(
            publicKeys: Dictionary(keys.map { ($0.kid, $0) }, uniquingKeysWith: { first, _ in first }),
            clock: clock, leeway: leeway, audience: audience, issuer: issuer)
    }

    /// The claims of `token` if every check above passes.
    public func verify(_ token: String) throws(TokenError) -> JSONValue {
        let bytes = Array(token.utf8)
        guard bytes.count <= Self.maxTokenBytes else { throw .tooLarge }
        let parts = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw .wrongPartCount }

        let header = try Self.decodeObject(parts[0], part: .header)
        guard header["alg"] == .string(TokenSigner.algorithm) else { throw .unsupportedAlgorithm }
        guard header["crit"] == nil else { throw .unsupportedCriticalHeader }
        guard let kid = header["kid"]?.stringValue else { throw .missingKeyID }
        guard let key = publicKeys[kid] else { throw .unknownKeyID }

        guard let signature = Base64.urlDecode(String(decoding: parts[2], as: UTF8.self)) else { throw .badBase64(.signature) }
        guard let payloadBytes = Base64.urlDecode(String(decoding: parts[1], as: UTF8.self)) else { throw .badBase64(.payload) }
        let signingInput = Array(bytes[..<parts[1].endIndex])
        guard key.isValidSignature(signature, for: signingInput) else { throw .badSignature }

        let claims = try Self.parseObject(payloadBytes, part: .payload)
        try checkClaims(claims)
        return .object(claims)
    }

    private func checkClaims(_ claims: [JSONKey: JSONValue]) throws(TokenError) {
        guard let subValue = claims["sub"] else { throw .missingClaim("sub") }
        guard let sub = subValue.stringValue else { throw .invalidClaim("sub") }
        guard (1...Self.maxSubjectLength).contains(sub.utf16.count) else { throw .invalidSubject }
        let exp = try Self.numericDate(claims, "exp")
        let iat = try Self.numericDate(claims, "iat")

        let now = clock.now()
        guard exp > now - leeway else { throw .expired }
        guard iat <= now + leeway else { throw .issuedInFuture }
        if claims["nbf"] != nil {
            guard try Self.numericDate(claims, "nbf") <= now + leeway else { throw .notYetValid }
        }
        let (lifetime, overflow) = exp.subtractingReportingOverflow(iat)
        guard !overflow, lifetime <= Self.maxLifetime else { throw .lifetimeTooLong }
        if let audience, claims["aud"] != .string(audience) { throw .wrongAudience }
        if let issuer, claims["iss"] != .string(issuer) { throw .wrongIssuer }
    }

    /// A required NumericDate claim (RFC 7519 §2) in whole seconds; fractions are dropped.
    private static func numericDate(_ claims: [JSONKey: JSONValue], _ name: String) throws(TokenError) -> Int64 {
        switch claims[name] {
        case nil: throw .missingClaim(name)
        case .int(let seconds)?: return seconds
        case .double(let seconds)? where seconds.isFinite && abs(seconds) < 1e15: return Int64(seconds.rounded(.down))
        default: throw .invalidClaim(name)
        }
    }

    private static func decodeObject(_ encoded: ArraySlice<UInt8>, part: TokenError.Part) throws(TokenError) -> [JSONKey: JSONValue] {
        guard let decoded = Base64.urlDecode(String(decoding: encoded, as: UTF8.self)) else { throw .badBase64(part) }
        return try parseObject(decoded, part: part)
    }

    private static func parseObject(_ json: [UInt8], part: TokenError.Part) throws(TokenError) -> [JSONKey: JSONValue] {
        let value: JSONValue
        do { value = try JSONParser.parse(json) } catch { throw .badJSON(part) }
        guard let object = value.objectValue else { throw .notAnObject(part) }
        return object
    }
}
