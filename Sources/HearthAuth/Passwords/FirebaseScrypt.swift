/// Checks passwords against hashes exported from Firebase Auth (`firebase auth:export`),
/// which use Firebase's modified scrypt (docs/protocol/auth.md §5.2):
///
///     salt' = salt || saltSeparator
///     dk    = scrypt(P = password (UTF-8), S = salt', N = 2^memCost, r = rounds, p = 1, dkLen = 64)
///     hash  = AES-256-CTR(key = dk[0..<32], counter block = 16 zero bytes).encrypt(signerKey)
///
/// Only the first 32 bytes of the 64-byte scrypt output are used, and the output is as long
/// as the signer key. Imported users keep these hashes until their first successful sign-in,
/// when the caller re-hashes with `PasswordHasher` (docs/design.md §6).
///
/// The signer key is a project-wide secret: it is not in `description` or the mirror.
public struct FirebaseScrypt: Sendable, CustomStringConvertible, CustomReflectable {
    /// Firebase's accepted range for `rounds` (scrypt r), per its import API.
    public static let roundsRange = 1...8
    /// Firebase's accepted range for `memCost` (log2 N), per its import API.
    public static let memCostRange = 1...14
    /// Signer key length bounds (Firebase's keys are 64 bytes).
    public static let signerKeyLengthRange = 1...1024
    /// The longest salt separator accepted (Firebase's is usually 1 byte).
    public static let maxSaltSeparatorBytes = 64
    /// The longest per-user salt accepted (Firebase's are 10–16 bytes).
    public static let maxSaltBytes = 64
    /// scrypt's output length in Firebase's scheme.
    static let derivedKeyLength = 64

    let signerKey: [UInt8]
    let saltSeparator: [UInt8]
    public let rounds: Int
    public let memCost: Int

    /// The project's hash parameters as raw bytes.
    public init(signerKey: [UInt8], saltSeparator: [UInt8], rounds: Int, memCost: Int) throws(FirebaseScryptError) {
        guard Self.signerKeyLengthRange.contains(signerKey.count) else { throw .invalidSignerKey }
        guard saltSeparator.count <= Self.maxSaltSeparatorBytes else { throw .invalidSaltSeparator }
        guard Self.roundsRange.contains(rounds) else { throw .roundsOutOfRange }
        guard Self.memCostRange.contains(memCost) else { throw .memCostOutOfRange }
        self.signerKey = signerKey
        self.saltSeparator = saltSeparator
        self.rounds = rounds
        self.memCost = memCost
    }

    /// The project's hash parameters as the Firebase console shows them
    /// (`base64_signer_key`, `base64_salt_separator`: standard base64, padding optional).
    public init(base64SignerKey: String, base64SaltSeparator: String, rounds: Int, memCost: Int) throws(FirebaseScryptError) {
        guard let key = Base64.decode(base64SignerKey, alphabet: .standard, padding: .optional) else { throw .invalidSignerKey }
        guard let separator = Base64.decode(base64SaltSeparator, alphabet: .standard, padding: .optional) else {
            throw .invalidSaltSeparator
        }
        try self.init(signerKey: key, saltSeparator: separator, rounds: rounds, memCost: memCost)
    }

    /// The Firebase hash of `password` with the user's `salt`.
    public func hash(password: String, salt: [UInt8]) throws(FirebaseScryptError) -> [UInt8] {
        guard password.utf8.count <= PasswordHasher.maxPasswordBytes else { throw .passwordTooLong }
        guard salt.count <= Self.maxSaltBytes else { throw .invalidSalt }
        let n = UInt64(1) << UInt64(memCost)
        let r = UInt64(rounds)
        // At most 128·8·(2^14 + 3) bytes ≈ 16 MiB, inside the password hasher's budget.
        let memory = Scrypt.memoryRequired(n: n, r: r, p: 1)!
        do {
            let derived = try Scrypt.deriveKey(
                password: Array(password.utf8), salt: salt + saltSeparator,
                n: n, r: r, p: 1, length: Self.derivedKeyLength, maxMemory: memory)
            return try AESCTR.encrypt(
                signerKey, key: derived[0..<AESCTR.keyByteCount],
                iv: [UInt8](repeating: 0, count: AESCTR.blockByteCount))
        } catch {
            throw .crypto(error)
        }
    }

    /// Whether `password` matches the exported `hash` for a user with `salt`, compared in
    /// constant time. Fails closed: any error (oversized input, libcrypto failure) is a
    /// mismatch; use `hash(password:salt:)` to see the error.
    public func verify(password: String, salt: [UInt8], hash expected: [UInt8]) -> Bool {
        guard let actual = try? hash(password: password, salt: salt) else { return false }
        return ConstantTime.equals(actual, expected)
    }

    /// `verify` with the user's `salt` and `passwordHash` as they appear in an export
    /// (docs/protocol/auth.md §5.1: standard base64; padding optional). Undecodable input
    /// is a mismatch.
    public func verify(password: String, base64Salt: String, base64Hash: String) -> Bool {
        guard let salt = Base64.decode(base64Salt, alphabet: .standard, padding: .optional),
              let expected = Base64.decode(base64Hash, alphabet: .standard, padding: .optional)
        else { return false }
        return verify(password: password, salt: salt, hash: expected)
    }

    public var description: String { "FirebaseScrypt(rounds: \(rounds), memCost: \(memCost))" }

    public var customMirror: Mirror {
        Mirror(self, children: ["rounds": rounds, "memCost": memCost], displayStyle: .struct)
    }
}
