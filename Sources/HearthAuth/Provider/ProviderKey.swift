import COpenSSL
import HearthJSON

/// A public key of an identity provider: RSA (RS256) or EC P-256 (ES256), read
/// from a JWK (`kty` `RSA` with `n`/`e`, or `EC` with `crv` `P-256` and `x`/`y`) or from an
/// X.509 certificate in PEM (Google's format for Firebase project keys). Verifies only the
/// algorithm its type allows, so a key can never be used with another one.
///
/// `@unchecked Sendable`: the `EVP_PKEY` is never mutated after `init`, and libcrypto
/// allows one key to be used from several threads at once as long as each operation has its
/// own `EVP_MD_CTX`, which `verify` creates. Freed in `deinit`.
public final class ProviderKey: @unchecked Sendable, CustomStringConvertible {
    public enum Algorithm: String, Sendable {
        case rs256 = "RS256"
        case es256 = "ES256"
    }

    /// Smaller RSA keys are refused (RFC 7518 §3.3).
    public static let minimumRSABits: Int32 = RS256Key.minimumBits
    /// The longest modulus read, bytes (16384 bits).
    public static let maxRSAModulusBytes = 2048
    /// The longest certificate PEM read.
    public static let maxPEMBytes = 16 * 1024

    public let kid: String
    public let algorithm: Algorithm
    private let pkey: OpaquePointer

    private init(kid: String, algorithm: Algorithm, pkey: OpaquePointer) {
        (self.kid, self.algorithm, self.pkey) = (kid, algorithm, pkey)
    }

    deinit { EVP_PKEY_free(pkey) }

    public var description: String { "ProviderKey(kid: \(kid), \(algorithm.rawValue))" }

    /// The key a JWK describes; nil for a key of another type, curve or use (skipped by a
    /// JWKS reader: providers publish encryption keys too).
    public convenience init?(jwk: JSONValue) {
        guard let members = jwk.objectValue, let kid = members["kid"]?.stringValue, !kid.isEmpty else { return nil }
        if let use = members["use"]?.stringValue, use != "sig" { return nil }
        let alg = members["alg"]?.stringValue
        let spki: [UInt8]
        let algorithm: Algorithm
        switch members["kty"]?.stringValue {
        case "RSA":
            guard alg == nil || alg == "RS256",
                  let n = members["n"]?.stringValue.flatMap(Base64.urlDecode), let e = members["e"]?.stringValue.flatMap(Base64.urlDecode),
                  !n.isEmpty, n.count <= Self.maxRSAModulusBytes, !e.isEmpty, e.count <= 8 else { return nil }
            spki = DER.sequence(DER.sequence(DER.rsaEncryptionOID + DER.null)
                                + DER.bitString(DER.sequence(DER.integer(n) + DER.integer(e))))
            algorithm = .rs256
        case "EC":
            guard alg == nil || alg == "ES256", members["crv"]?.stringValue == "P-256",
                  let x = members["x"]?.stringValue.flatMap(Base64.urlDecode), let y = members["y"]?.stringValue.flatMap(Base64.urlDecode),
                  x.count == 32, y.count == 32 else { return nil }
            spki = DER.p256PublicKeyPrefix + [0x04] + x + y
            algorithm = .es256
        default:
            return nil
        }
        guard let pkey = Self.readSPKI(spki) else { return nil }
        guard algorithm != .rs256 || EVP_PKEY_get_bits(pkey) >= Self.minimumRSABits else {
            EVP_PKEY_free(pkey)
            return nil
        }
        self.init(kid: kid, algorithm: algorithm, pkey: pkey)
    }

    /// The RSA key of an X.509 certificate in PEM (Google's
    /// `securetoken@system.gserviceaccount.com` certificates), named `kid`.
    public convenience init?(certificatePEM pem: String, kid: String) {
        let bytes = Array(pem.utf8)
        guard !bytes.isEmpty, bytes.count <= Self.maxPEMBytes else { return nil }
        let pkey = bytes.withUnsafeBufferPointer { buffer -> OpaquePointer? in
            guard let bio = BIO_new_mem_buf(buffer.baseAddress, Int32(buffer.count)) else { return nil }
            defer { BIO_free(bio) }
            guard let certificate = PEM_read_bio_X509(bio, nil, nil, nil) else { return nil }
            defer { X509_free(certificate) }
            return X509_get_pubkey(certificate)
        }
        ERR_clear_error()
        guard let pkey else { return nil }
        guard EVP_PKEY_get_base_id(pkey) == EVP_PKEY_RSA, EVP_PKEY_get_bits(pkey) >= Self.minimumRSABits else {
            EVP_PKEY_free(pkey)
            return nil
        }
        self.init(kid: kid, algorithm: .rs256, pkey: pkey)
    }

    private static func readSPKI(_ der: [UInt8]) -> OpaquePointer? {
        let key = der.withUnsafeBufferPointer { buffer -> OpaquePointer? in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_PUBKEY(nil, &cursor, buffer.count)
        }
        ERR_clear_error()
        return key
    }

    /// Whether `signature` (JOSE form: PKCS #1 v1.5 for RS256, `r || s` for ES256) signs
    /// `message` with this key under `algorithm`, which must be the key's own.
    public func verify(_ signature: [UInt8], for message: [UInt8], algorithm: Algorithm) -> Bool {
        guard algorithm == self.algorithm else { return false }
        let encoded: [UInt8]
        switch algorithm {
        case .rs256:
            guard !signature.isEmpty, signature.count == Int((EVP_PKEY_get_bits(pkey) + 7) / 8) else { return false }
            encoded = signature
        case .es256:
            guard signature.count == 64 else { return false }
            encoded = DER.sequence(DER.integer(Array(signature[0..<32])) + DER.integer(Array(signature[32..<64])))
        }
        return DigestVerify.sha256(encoded, for: message, key: pkey)
    }
}

/// The few DER encodings a public key and an ECDSA signature need.
enum DER {
    static let rsaEncryptionOID: [UInt8] = [0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x01]
    static let null: [UInt8] = [0x05, 0x00]
    /// SubjectPublicKeyInfo of an uncompressed P-256 point, up to the point itself.
    static let p256PublicKeyPrefix: [UInt8] = [
        0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01,
        0x06, 0x08, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00,
    ]

    static func length(_ count: Int) -> [UInt8] {
        if count < 0x80 { return [UInt8(count)] }
        var bytes: [UInt8] = []
        var rest = count
        while rest > 0 { bytes.insert(UInt8(rest & 0xFF), at: 0); rest >>= 8 }
        return [0x80 | UInt8(bytes.count)] + bytes
    }

    static func tagged(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] { [tag] + length(content.count) + content }
    static func sequence(_ content: [UInt8]) -> [UInt8] { tagged(0x30, content) }
    static func bitString(_ content: [UInt8]) -> [UInt8] { tagged(0x03, [0x00] + content) }

    /// A non-negative INTEGER from big-endian bytes.
    static func integer(_ bytes: [UInt8]) -> [UInt8] {
        var trimmed = Array(bytes.drop { $0 == 0 })
        if trimmed.isEmpty { trimmed = [0] }
        if trimmed[0] & 0x80 != 0 { trimmed.insert(0, at: 0) }
        return tagged(0x02, trimmed)
    }
}
