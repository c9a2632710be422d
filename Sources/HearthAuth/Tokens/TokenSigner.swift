import HearthJSON

/// Signs JWTs (RFC 7519) as compact JWS (RFC 7515 §7.1) with Ed25519:
/// `base64url(header) "." base64url(claims) "." base64url(signature)`, header
/// `{"alg":"EdDSA","kid":"<kid>","typ":"JWT"}` (RFC 8037 §3.1).
///
/// JSON is written by `JSONWriter` (compact, keys in a fixed order), so the same claims and
/// key always give the same token. Rotation: make a signer with the new key and keep the
/// old `VerifyingKey` in the verifier (and JWKS) until its last token has expired.
public struct TokenSigner: Sendable {
    /// The JWS `alg` for Ed25519 (RFC 8037 §3.1).
    public static let algorithm = "EdDSA"

    public let key: SigningKey

    public init(key: SigningKey) {
        self.key = key
    }

    /// The signed token for `claims` (a JSON object; see `IDTokenClaims` for ID tokens).
    public func sign(claims: JSONValue) throws(TokenSigningError) -> String {
        guard case .object = claims else { throw .claimsNotAnObject }
        let header: JSONValue = ["alg": .string(Self.algorithm), "kid": .string(key.kid), "typ": "JWT"]
        let signingInput = Base64.urlEncode(JSONWriter.write(header)) + "." + Base64.urlEncode(JSONWriter.write(claims))
        // 86 characters of signature plus the dot.
        guard signingInput.utf8.count + 87 <= TokenVerifier.maxTokenBytes else { throw .tooLarge }
        let signature: [UInt8]
        do { signature = try key.key.sign(Array(signingInput.utf8)) } catch { throw .crypto(error) }
        return signingInput + "." + Base64.urlEncode(signature)
    }
}
