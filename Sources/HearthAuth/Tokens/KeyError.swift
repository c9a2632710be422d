/// Why a signing or verifying key could not be made, exported or used. Never carries key
/// bytes.
public enum KeyError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A raw Ed25519 private key must be exactly 32 bytes.
    case invalidPrivateKeyLength(Int)
    /// Not a 32-byte Ed25519 public key, or not a point on the curve.
    case invalidPublicKey
    /// A JWK that is not `{"kty":"OKP","crv":"Ed25519","x":…}` with a matching `kid`.
    case invalidJWK
    /// libcrypto failed.
    case crypto(CryptoError)

    public var description: String {
        switch self {
        case .invalidPrivateKeyLength(let n): return "Ed25519 private key must be 32 bytes, got \(n)"
        case .invalidPublicKey: return "invalid Ed25519 public key"
        case .invalidJWK: return "invalid Ed25519 JWK"
        case .crypto(let error): return "key operation failed: \(error)"
        }
    }
}
