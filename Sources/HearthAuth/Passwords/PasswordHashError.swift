/// Why a password could not be hashed or a stored hash could not be checked.
///
/// Descriptions name the problem only: never the password, the salt, the hash or the
/// stored string (which is a password-equivalent for offline guessing).
public enum PasswordHashError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Which scrypt parameter broke a limit in `ScryptParameters`.
    public enum Parameter: Sendable, Hashable {
        case logN, r, p, saltLength, hashLength, memory, work
    }

    /// What is wrong with a stored PHC string.
    public enum Malformation: Sendable, Hashable {
        /// Not `$scrypt$<params>$<salt>$<hash>`: wrong number of `$` fields or empty fields.
        case structure
        /// The parameter field is not exactly `ln=<int>,r=<int>,p=<int>` in that order,
        /// with canonical decimal integers.
        case parameters
        /// The salt is not strict unpadded standard base64.
        case saltEncoding
        /// The hash is not strict unpadded standard base64.
        case hashEncoding
        /// Longer than `PHCString.maxLength`.
        case tooLong
    }

    /// The stored string names another algorithm (e.g. `$argon2id$`); the identifier is
    /// kept only if it is short and alphanumeric, so it is safe to log.
    case unsupportedAlgorithm(String)
    /// The stored string does not parse.
    case malformed(Malformation)
    /// A parameter (configured or stored) is outside the accepted range.
    case parameterOutOfRange(Parameter)
    /// The password is longer than `PasswordHasher.maxPasswordBytes` (UTF-8).
    case passwordTooLong
    /// libcrypto failed (random salt or scrypt itself).
    case crypto(CryptoError)

    public var description: String {
        switch self {
        case .unsupportedAlgorithm(let id): return "unsupported password hash algorithm '\(id)'"
        case .malformed(let what): return "malformed password hash (\(what))"
        case .parameterOutOfRange(let which): return "scrypt parameter out of range (\(which))"
        case .passwordTooLong: return "password longer than \(PasswordHasher.maxPasswordBytes) bytes"
        case .crypto(let error): return "password hashing failed: \(error)"
        }
    }
}
