import COpenSSL

/// Owns one libcrypto Ed25519 `EVP_PKEY` (private or public) and signs or verifies with it.
///
/// `@unchecked Sendable`: the key is never mutated after `init`, and libcrypto allows one
/// `EVP_PKEY` to be used from several threads at once as long as each operation has its own
/// `EVP_MD_CTX`, which every call here creates. Freed in `deinit`.
final class Ed25519Key: @unchecked Sendable {
    static let privateKeyByteCount = 32
    static let publicKeyByteCount = 32
    static let signatureByteCount = 64

    private let pkey: OpaquePointer

    private init(pkey: OpaquePointer) {
        self.pkey = pkey
    }

    deinit {
        EVP_PKEY_free(pkey)
    }

    /// A new random key pair (`EVP_PKEY_keygen`).
    static func generate() throws(CryptoError) -> Ed25519Key {
        guard let context = EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519, nil) else {
            throw CryptoError.capture("EVP_PKEY_CTX_new_id")
        }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_keygen_init(context) == 1 else { throw CryptoError.capture("EVP_PKEY_keygen_init") }
        var pkey: OpaquePointer?
        guard EVP_PKEY_keygen(context, &pkey) == 1, let pkey else { throw CryptoError.capture("EVP_PKEY_keygen") }
        return Ed25519Key(pkey: pkey)
    }

    /// The key whose 32-byte RFC 8032 private key (the seed) is `raw`.
    static func privateKey(raw: [UInt8]) throws(CryptoError) -> Ed25519Key {
        precondition(raw.count == privateKeyByteCount, "Ed25519 private key size")
        let pkey = raw.withUnsafeBufferPointer { EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nil, $0.baseAddress, $0.count) }
        guard let pkey else { throw CryptoError.capture("EVP_PKEY_new_raw_private_key") }
        return Ed25519Key(pkey: pkey)
    }

    /// The public-only key whose 32-byte encoding is `raw`. Fails for encodings that are not
    /// a point on the curve.
    static func publicKey(raw: [UInt8]) throws(CryptoError) -> Ed25519Key {
        precondition(raw.count == publicKeyByteCount, "Ed25519 public key size")
        let pkey = raw.withUnsafeBufferPointer { EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nil, $0.baseAddress, $0.count) }
        guard let pkey else { throw CryptoError.capture("EVP_PKEY_new_raw_public_key") }
        return Ed25519Key(pkey: pkey)
    }

    /// The 32-byte private key. Only valid for keys made by `generate` or `privateKey(raw:)`.
    func rawPrivateKey() throws(CryptoError) -> [UInt8] {
        var raw = [UInt8](repeating: 0, count: Self.privateKeyByteCount)
        var length = raw.count
        let status = raw.withUnsafeMutableBufferPointer { EVP_PKEY_get_raw_private_key(pkey, $0.baseAddress, &length) }
        guard status == 1, length == Self.privateKeyByteCount else {
            throw CryptoError.capture("EVP_PKEY_get_raw_private_key")
        }
        return raw
    }

    /// The 32-byte public key.
    func rawPublicKey() throws(CryptoError) -> [UInt8] {
        var raw = [UInt8](repeating: 0, count: Self.publicKeyByteCount)
        var length = raw.count
        let status = raw.withUnsafeMutableBufferPointer { EVP_PKEY_get_raw_public_key(pkey, $0.baseAddress, &length) }
        guard status == 1, length == Self.publicKeyByteCount else {
            throw CryptoError.capture("EVP_PKEY_get_raw_public_key")
        }
        return raw
    }

    /// The 64-byte pure-Ed25519 signature of `message` (RFC 8032 §5.1.6; no pre-hash, so
    /// `EVP_DigestSignInit` gets no digest).
    func sign(_ message: [UInt8]) throws(CryptoError) -> [UInt8] {
        guard let context = EVP_MD_CTX_new() else { throw CryptoError.capture("EVP_MD_CTX_new") }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestSignInit(context, nil, nil, nil, pkey) == 1 else {
            throw CryptoError.capture("EVP_DigestSignInit")
        }
        var signature = [UInt8](repeating: 0, count: Self.signatureByteCount)
        var length = signature.count
        let status = Self.withBytes(message) { m, count in
            signature.withUnsafeMutableBufferPointer { EVP_DigestSign(context, $0.baseAddress, &length, m, count) }
        }
        guard status == 1, length == Self.signatureByteCount else { throw CryptoError.capture("EVP_DigestSign") }
        return signature
    }

    /// Whether `signature` is a valid Ed25519 signature of `message` under this key.
    /// libcrypto rejects non-canonical `S` values, so signatures are not malleable.
    func verify(_ signature: [UInt8], for message: [UInt8]) -> Bool {
        guard signature.count == Self.signatureByteCount else { return false }
        guard let context = EVP_MD_CTX_new() else {
            ERR_clear_error()
            return false
        }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestVerifyInit(context, nil, nil, nil, pkey) == 1 else {
            ERR_clear_error()
            return false
        }
        let status = Self.withBytes(message) { m, count in
            signature.withUnsafeBufferPointer { EVP_DigestVerify(context, $0.baseAddress, $0.count, m, count) }
        }
        // A failed verification leaves a reason on the thread's error queue; drop it so
        // the next unrelated failure reports its own.
        ERR_clear_error()
        return status == 1
    }

    /// Calls `body` with a non-nil pointer to `bytes` (an empty message still needs one).
    private static func withBytes<R>(_ bytes: [UInt8], _ body: (UnsafePointer<UInt8>, Int) -> R) -> R {
        if bytes.isEmpty {
            var placeholder: UInt8 = 0
            return withUnsafePointer(to: &placeholder) { body($0, 0) }
        }
        return bytes.withUnsafeBufferPointer { body($0.baseAddress!, $0.count) }
    }
}
