import COpenSSL

/// One `EVP_DigestVerify` with SHA-256 (RS256 and ES256 signatures), its own context.
enum DigestVerify {
    /// Whether `signature` (libcrypto's encoding for the key's type) signs `message`.
    static func sha256(_ signature: [UInt8], for message: [UInt8], key pkey: OpaquePointer) -> Bool {
        guard let context = EVP_MD_CTX_new() else {
            ERR_clear_error()
            return false
        }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestVerifyInit(context, nil, EVP_sha256(), nil, pkey) == 1 else {
            ERR_clear_error()
            return false
        }
        var placeholder: UInt8 = 0
        let status = message.withUnsafeBufferPointer { m in
            signature.withUnsafeBufferPointer { s in
                withUnsafePointer(to: &placeholder) { empty in
                    EVP_DigestVerify(context, s.baseAddress, s.count, m.baseAddress ?? empty, m.count)
                }
            }
        }
        ERR_clear_error()
        return status == 1
    }
}
