import COpenSSL

/// An RSA key (from a PEM private or public key) that verifies RS256 signatures
/// (RSASSA-PKCS1-v1_5 with SHA-256, RFC 7518 §3.3): the signatures of the custom tokens
/// that firebase-admin's `create_custom_token` makes with a service account's key.
///
/// `@unchecked Sendable`: the key is never mutated after `init`, and libcrypto allows one
/// `EVP_PKEY` to be used from several threads at once as long as each operation has its own
/// `EVP_MD_CTX`, which every call here creates. Freed in `deinit`.
public final class RS256Key: @unchecked Sendable {
    /// Smaller RSA keys are refused (RFC 7518 §3.3 requires 2048 bits).
    public static let minimumBits: Int32 = 2048
    /// The largest PEM text read.
    public static let maxPEMBytes = 16 * 1024

    private let pkey: OpaquePointer
    public let bits: Int32

    private init(pkey: OpaquePointer, bits: Int32) {
        self.pkey = pkey
        self.bits = bits
    }

    deinit { EVP_PKEY_free(pkey) }

    public enum KeyError: Error, Sendable, Equatable, CustomStringConvertible {
        case unreadable
        case notRSA
        case tooSmall(Int32)
        public var description: String {
            switch self {
            case .unreadable: return "not a PEM private or public key"
            case .notRSA: return "not an RSA key"
            case .tooSmall(let bits): return "an RSA key of \(bits) bits (at least \(RS256Key.minimumBits) needed)"
            }
        }
    }

    /// The key in `pem`: `-----BEGIN PRIVATE KEY-----` (PKCS #8, as in a service account's
    /// JSON), `-----BEGIN RSA PRIVATE KEY-----`, or `-----BEGIN PUBLIC KEY-----`.
    public init(pem: String) throws(KeyError) {
        let bytes = Array(pem.utf8)
        guard !bytes.isEmpty, bytes.count <= Self.maxPEMBytes else { throw .unreadable }
        func read(_ reader: (OpaquePointer) -> OpaquePointer?) -> OpaquePointer? {
            bytes.withUnsafeBufferPointer { buffer -> OpaquePointer? in
                guard let bio = BIO_new_mem_buf(buffer.baseAddress, Int32(buffer.count)) else { return nil }
                defer { BIO_free(bio) }
                return reader(bio)
            }
        }
        let isPublic = pem.contains("-----BEGIN PUBLIC KEY-----")
        let key = read { bio in isPublic ? PEM_read_bio_PUBKEY(bio, nil, nil, nil) : PEM_read_bio_PrivateKey(bio, nil, nil, nil) }
        ERR_clear_error()
        guard let key else { throw .unreadable }
        guard EVP_PKEY_get_base_id(key) == EVP_PKEY_RSA else {
            EVP_PKEY_free(key)
            throw .notRSA
        }
        let bits = EVP_PKEY_get_bits(key)
        guard bits >= Self.minimumBits else {
            EVP_PKEY_free(key)
            throw .tooSmall(bits)
        }
        self.pkey = key
        self.bits = bits
    }

    /// Whether `signature` is an RS256 signature of `message` under this key.
    public func verify(_ signature: [UInt8], for message: [UInt8]) -> Bool {
        guard !signature.isEmpty, signature.count == Int((bits + 7) / 8) else { return false }
        return DigestVerify.sha256(signature, for: message, key: pkey)
    }
}
