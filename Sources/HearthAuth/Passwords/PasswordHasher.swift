/// Hashes and verifies user passwords with scrypt (RFC 7914) via libcrypto's
/// `EVP_PBE_scrypt`, storing them as `PHCString`s (docs/design.md §6).
///
/// Each password gets its own random salt (`RAND_bytes`), and the parameters travel with
/// the hash, so raising `parameters` later only affects new hashes; `needsRehash` tells the
/// caller which stored hashes to redo after a successful sign-in.
///
/// Each call is blocking and expensive on purpose (~87 ms, 32 MiB at the defaults): run it on
/// a `HashingPool`, never on an I/O queue.
public struct PasswordHasher: Sendable {
    /// The longest password accepted, in UTF-8 bytes. scrypt's cost does not depend on the
    /// password length, but its first PBKDF2 pass does, and no real password is this long.
    public static let maxPasswordBytes = 4096

    /// Parameters for new hashes, and the bar `needsRehash` measures stored ones against.
    public let parameters: ScryptParameters

    public init(parameters: ScryptParameters = .default) {
        self.parameters = parameters
    }

    /// A new PHC string for `password` with a fresh random salt.
    public func hash(_ password: String) throws(PasswordHashError) -> String {
        let passwordBytes = try Self.checkedBytes(password)
        let salt: [UInt8]
        do { salt = try SecureRandom.bytes(count: parameters.saltLength) } catch { throw .crypto(error) }
        let derived = try Self.derive(passwordBytes, salt: salt, parameters: parameters)
        return PHCString(parameters: parameters, salt: salt, hash: derived).string
    }

    /// Whether `password` matches the stored `phc` string. Throws for strings that do not
    /// parse or whose parameters break the limits, before any hashing is done; returns
    /// false for a well-formed hash of a different password. The comparison is constant
    /// time (`CRYPTO_memcmp`).
    public func verify(_ password: String, against phc: String) throws(PasswordHashError) -> Bool {
        let stored = try PHCString(parsing: phc)
        let passwordBytes = try Self.checkedBytes(password)
        let derived = try Self.derive(passwordBytes, salt: stored.salt, parameters: stored.parameters)
        return ConstantTime.equals(derived, stored.hash)
    }

    /// True when `phc` should be replaced by a hash with the current `parameters`: its costs
    /// or lengths are below them, or it does not parse at all (then `verify` fails anyway;
    /// the caller's fallback path decides).
    public func needsRehash(_ phc: String) -> Bool {
        guard let stored = try? PHCString(parsing: phc) else { return true }
        return stored.parameters.isWeaker(than: parameters)
    }

    private static func checkedBytes(_ password: String) throws(PasswordHashError) -> [UInt8] {
        guard password.utf8.count <= maxPasswordBytes else { throw .passwordTooLong }
        return Array(password.utf8)
    }

    private static func derive(_ password: [UInt8], salt: [UInt8], parameters: ScryptParameters) throws(PasswordHashError) -> [UInt8] {
        do {
            return try Scrypt.deriveKey(
                password: password, salt: salt,
                n: parameters.n, r: UInt64(parameters.r), p: UInt64(parameters.p),
                length: parameters.hashLength, maxMemory: ScryptParameters.maxMemoryBytes)
        } catch {
            throw .crypto(error)
        }
    }
}
