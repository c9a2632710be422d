/// Why `TokenSigner` could not sign.
public enum TokenSigningError: Error, Sendable, Hashable, CustomStringConvertible {
    /// JWT claims must be a JSON object (RFC 7519 §7.1).
    case claimsNotAnObject
    /// The token would exceed `TokenVerifier.maxTokenBytes`, so no verifier would accept it.
    case tooLarge
    /// libcrypto failed.
    case crypto(CryptoError)

    public var description: String {
        switch self {
        case .claimsNotAnObject: return "token claims must be a JSON object"
        case .tooLarge: return "token would be longer than \(TokenVerifier.maxTokenBytes) bytes"
        case .crypto(let error): return "token signing failed: \(error)"
        }
    }
}
