import COpenSSL

/// SHA-256 (FIPS 180-4) through libcrypto's one-shot `EVP_Digest`.
public enum SHA256 {
    /// The digest length in bytes.
    public static let byteCount = 32

    /// The SHA-256 digest of `bytes`.
    ///
    /// Not throwing: with the built-in SHA-256 the one-shot digest fails only when libcrypto
    /// cannot allocate its context, which Swift treats as fatal everywhere else too.
    public static func hash(_ bytes: some Collection<UInt8>) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: byteCount)
        var length: UInt32 = 0
        let input = Array(bytes)
        let status = input.withUnsafeBytes { inputBuffer in
            digest.withUnsafeMutableBufferPointer { out in
                EVP_Digest(
                    inputBuffer.baseAddress ?? UnsafeRawPointer(out.baseAddress!), inputBuffer.count,
                    out.baseAddress, &length, EVP_sha256(), nil)
            }
        }
        precondition(status == 1 && Int(length) == byteCount, "EVP_Digest(SHA-256) failed")
        return digest
    }
}
