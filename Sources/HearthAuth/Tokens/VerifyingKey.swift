import HearthJSON

/// An Ed25519 public key that verifies ID tokens, with its key id.
///
/// `kid` is the unpadded base64url of the first 8 bytes of SHA-256 of the raw public key
/// (11 characters): stable across restarts and machines for the same key, so key rotation
/// is just "add a key, start signing with it, drop the old one once its tokens expired".
public struct VerifyingKey: Sendable, Hashable, CustomStringConvertible {
    let key: Ed25519Key
    /// The 32-byte public key (RFC 8032 encoding).
    public let rawRepresentation: [UInt8]
    /// The key id (see the type's comment).
    public let kid: String

    /// The key whose 32-byte encoding is `rawRepresentation`. Rejects wrong lengths and
    /// encodings libcrypto does not accept as a curve point.
    public init(rawRepresentation: [UInt8]) throws(KeyError) {
        guard rawRepresentation.count == Ed25519Key.publicKeyByteCount else { throw .invalidPublicKey }
        do { self.key = try Ed25519Key.publicKey(raw: rawRepresentation) } catch { throw .invalidPublicKey }
        self.rawRepresentation = rawRepresentation
        self.kid = Self.keyID(for: rawRepresentation)
    }

    /// Whether `signature` is this key's Ed25519 signature of `message`.
    public func isValidSignature(_ signature: [UInt8], for message: [UInt8]) -> Bool {
        key.verify(signature, for: message)
    }

    /// The key as a JWK (RFC 8037 §2):
    /// `{"kty":"OKP","crv":"Ed25519","x":"<b64url>","kid":"…","alg":"EdDSA","use":"sig"}`.
    public var jwk: JSONValue {
        [
            "kty": "OKP", "crv": "Ed25519", "x": .string(Base64.urlEncode(rawRepresentation)),
            "kid": .string(kid), "alg": "EdDSA", "use": "sig",
        ]
    }

    /// The key a JWK describes. `kty`, `crv` and `x` are required; `kid`, `alg` and `use`,
    /// when present, must agree with what `jwk` would write, so a JWKS cannot rename keys.
    public init(jwk: JSONValue) throws(KeyError) {
        guard let members = jwk.objectValue,
              members["kty"] == "OKP", members["crv"] == "Ed25519",
              let x = members["x"]?.stringValue, let raw = Base64.urlDecode(x)
        else { throw .invalidJWK }
        try self.init(rawRepresentation: raw)
        if let kid = members["kid"], kid != .string(self.kid) { throw .invalidJWK }
        if let alg = members["alg"], alg != "EdDSA" { throw .invalidJWK }
        if let use = members["use"], use != "sig" { throw .invalidJWK }
    }

    public var description: String { "VerifyingKey(kid: \(kid))" }

    public static func == (a: VerifyingKey, b: VerifyingKey) -> Bool { a.rawRepresentation == b.rawRepresentation }
    public func hash(into hasher: inout Hasher) { hasher.combine(rawRepresentation) }

    static let keyIDSourceBytes = 8

    static func keyID(for rawPublicKey: [UInt8]) -> String {
        Base64.urlEncode(SHA256.hash(rawPublicKey).prefix(keyIDSourceBytes))
    }
}
