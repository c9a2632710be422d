/// A password hash imported from Firebase Auth (`hearth users import`), stored in
/// `users.password_hash` with everything needed to check it, so it needs no other
/// configuration:
///
///     $firebase-scrypt$r=<rounds>,m=<memCost>$<signer key>$<salt separator>$<salt>$<hash>
///
/// * `rounds` and `memCost` are canonical decimals within `FirebaseScrypt`'s ranges;
/// * the four byte fields are standard base64 without padding (as in `PHCString`); the
///   salt separator and the salt may be empty, the signer key and the hash may not.
///
/// The signer key is the Firebase project's secret; with it and a hash, passwords can be
/// guessed offline exactly as with a Firebase export, so the database deserves the same
/// care. The first successful sign-in replaces the string by Hearth's own hash
/// (`PasswordHasher.needsRehash` is true for it), after which the key is gone from that row.
public struct FirebaseScryptHash: Sendable, CustomStringConvertible {
    /// The algorithm field.
    public static let identifier = "firebase-scrypt"
    /// How a stored string of this kind starts.
    public static let prefix = "$" + identifier + "$"
    /// The longest string parsed (a 1024-byte signer key and hash, in base64, fit).
    public static let maxLength = 4096

    public let scrypt: FirebaseScrypt
    public let salt: [UInt8]
    public let hash: [UInt8]

    /// A user's salt and hash (as exported, decoded) with the project's parameters: a
    /// salt longer than `FirebaseScrypt.maxSaltBytes` or a hash outside
    /// `FirebaseScrypt.signerKeyLengthRange` (it is as long as the signer key) is malformed.
    public init(scrypt: FirebaseScrypt, salt: [UInt8], hash: [UInt8]) throws(PasswordHashError) {
        guard salt.count <= FirebaseScrypt.maxSaltBytes else { throw .malformed(.saltEncoding) }
        guard FirebaseScrypt.signerKeyLengthRange.contains(hash.count) else { throw .malformed(.hashEncoding) }
        self.scrypt = scrypt
        self.salt = salt
        self.hash = hash
    }

    /// A user's `salt` and `passwordHash` as `firebase auth:export` writes them (standard
    /// base64, padding optional).
    public init(scrypt: FirebaseScrypt, base64Salt: String, base64Hash: String) throws(PasswordHashError) {
        guard let salt = Base64.decode(base64Salt, alphabet: .standard, padding: .optional) else { throw .malformed(.saltEncoding) }
        guard let hash = Base64.decode(base64Hash, alphabet: .standard, padding: .optional) else { throw .malformed(.hashEncoding) }
        try self.init(scrypt: scrypt, salt: salt, hash: hash)
    }

    /// Parses a stored string (format above). Errors never quote it.
    public init(parsing text: String) throws(PasswordHashError) {
        guard text.utf8.count <= Self.maxLength else { throw .malformed(.tooLong) }
        let fields = text.split(separator: "$", omittingEmptySubsequences: false)
        // "", identifier, parameters, signer key, salt separator, salt, hash
        guard fields.count >= 2, fields[0].isEmpty else { throw .malformed(.structure) }
        guard fields[1] == Self.identifier else { throw .unsupportedAlgorithm("?") }
        guard fields.count == 7, !fields[2].isEmpty, !fields[3].isEmpty, !fields[6].isEmpty else { throw .malformed(.structure) }
        let parameters = fields[2].split(separator: ",", omittingEmptySubsequences: false)
        guard parameters.count == 2, parameters[0].hasPrefix("r="), parameters[1].hasPrefix("m="),
              let rounds = PHCString.canonicalDecimal(parameters[0].dropFirst(2)),
              let memCost = PHCString.canonicalDecimal(parameters[1].dropFirst(2)) else { throw .malformed(.parameters) }
        guard let key = Base64.decode(fields[3], alphabet: .standard, padding: .none),
              let separator = Base64.decode(fields[4], alphabet: .standard, padding: .none) else { throw .malformed(.parameters) }
        guard let salt = Base64.decode(fields[5], alphabet: .standard, padding: .none) else { throw .malformed(.saltEncoding) }
        guard let hash = Base64.decode(fields[6], alphabet: .standard, padding: .none) else { throw .malformed(.hashEncoding) }
        let scrypt: FirebaseScrypt
        do {
            scrypt = try FirebaseScrypt(signerKey: key, saltSeparator: separator, rounds: rounds, memCost: memCost)
        } catch {
            throw .malformed(.parameters)
        }
        try self.init(scrypt: scrypt, salt: salt, hash: hash)
    }

    /// The stored form.
    public var string: String {
        func b64(_ bytes: [UInt8]) -> String { Base64.encode(bytes, alphabet: .standard, padding: .none) }
        return Self.prefix + "r=\(scrypt.rounds),m=\(scrypt.memCost)$" + b64(scrypt.signerKey) + "$"
            + b64(scrypt.saltSeparator) + "$" + b64(salt) + "$" + b64(hash)
    }

    /// Whether `password` matches, in constant time (`FirebaseScrypt.verify`).
    public func verify(_ password: String) -> Bool {
        scrypt.verify(password: password, salt: salt, hash: hash)
    }

    /// The parameters only: the key, salt and hash stay out of logs.
    public var description: String { "FirebaseScryptHash(rounds: \(scrypt.rounds), memCost: \(scrypt.memCost))" }

}

extension PasswordHasher {
    /// `verify` for every kind of hash Hearth stores: its own PHC scrypt strings, and
    /// Firebase scrypt hashes imported by `hearth users import` (`FirebaseScryptHash`),
    /// which `needsRehash` always flags, so the first successful sign-in replaces them.
    /// Throws for strings that do not parse, before any hashing.
    public func verifyStored(_ password: String, against stored: String) throws(PasswordHashError) -> Bool {
        guard stored.hasPrefix(FirebaseScryptHash.prefix) else { return try verify(password, against: stored) }
        let imported = try FirebaseScryptHash(parsing: stored)
        guard password.utf8.count <= Self.maxPasswordBytes else { throw .passwordTooLong }
        return imported.verify(password)
    }
}
