/// An Ed25519 private key that signs ID tokens (RFC 8032; JWS `alg: "EdDSA"`, RFC 8037).
///
/// The private key never appears in `description`, `debugDescription` or the mirror (so
/// not in `dump` or string interpolation either): only the `kid`. Export it explicitly with
/// `rawPrivateKey()` to persist it.
public struct SigningKey: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    let key: Ed25519Key
    /// The matching public key (and through it the `kid`).
    public let verifyingKey: VerifyingKey

    private init(key: Ed25519Key) throws(KeyError) {
        self.key = key
        let rawPublicKey: [UInt8]
        do { rawPublicKey = try key.rawPublicKey() } catch { throw .crypto(error) }
        self.verifyingKey = try VerifyingKey(rawRepresentation: rawPublicKey)
    }

    /// A new random key (`EVP_PKEY_keygen` for ED25519).
    public static func generate() throws(KeyError) -> SigningKey {
        let key: Ed25519Key
        do { key = try Ed25519Key.generate() } catch { throw .crypto(error) }
        return try SigningKey(key: key)
    }

    /// The key whose 32-byte RFC 8032 private key (seed) is `rawPrivateKey`.
    public init(rawPrivateKey: [UInt8]) throws(KeyError) {
        guard rawPrivateKey.count == Ed25519Key.privateKeyByteCount else {
            throw .invalidPrivateKeyLength(rawPrivateKey.count)
        }
        let key: Ed25519Key
        do { key = try Ed25519Key.privateKey(raw: rawPrivateKey) } catch { throw .crypto(error) }
        try self.init(key: key)
    }

    /// The 32-byte private key, for persisting. Treat the result as a secret.
    public func rawPrivateKey() throws(KeyError) -> [UInt8] {
        do { return try key.rawPrivateKey() } catch { throw .crypto(error) }
    }

    /// The key id tokens name in their header (see `VerifyingKey.kid`).
    public var kid: String { verifyingKey.kid }

    /// The 64-byte Ed25519 signature of `message`.
    public func sign(_ message: [UInt8]) throws(KeyError) -> [UInt8] {
        do { return try key.sign(message) } catch { throw .crypto(error) }
    }

    public var description: String { "SigningKey(kid: \(kid))" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["kid": kid], displayStyle: .struct) }
}
