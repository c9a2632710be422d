/// Why Firebase scrypt parameters or inputs were rejected. Never carries key material.
public enum FirebaseScryptError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The signer key is empty, too long or not base64.
    case invalidSignerKey
    /// The salt separator is too long or not base64.
    case invalidSaltSeparator
    /// `rounds` is outside `FirebaseScrypt.roundsRange`.
    case roundsOutOfRange
    /// `memCost` is outside `FirebaseScrypt.memCostRange`.
    case memCostOutOfRange
    /// The user's salt is longer than `FirebaseScrypt.maxSaltBytes`.
    case invalidSalt
    /// The password is longer than `PasswordHasher.maxPasswordBytes`.
    case passwordTooLong
    /// libcrypto failed.
    case crypto(CryptoError)

    public var description: String {
        switch self {
        case .invalidSignerKey: return "invalid Firebase scrypt signer key"
        case .invalidSaltSeparator: return "invalid Firebase scrypt salt separator"
        case .roundsOutOfRange: return "Firebase scrypt rounds must be in \(FirebaseScrypt.roundsRange)"
        case .memCostOutOfRange: return "Firebase scrypt memCost must be in \(FirebaseScrypt.memCostRange)"
        case .invalidSalt: return "invalid Firebase scrypt salt"
        case .passwordTooLong: return "password longer than \(PasswordHasher.maxPasswordBytes) bytes"
        case .crypto(let error): return "Firebase scrypt failed: \(error)"
        }
    }
}
