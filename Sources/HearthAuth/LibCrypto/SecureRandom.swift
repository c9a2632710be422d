import COpenSSL

/// Cryptographically secure random bytes from libcrypto's DRBG (`RAND_bytes`).
public enum SecureRandom {
    /// The most bytes one call hands out; salts, keys and tokens need far fewer.
    public static let maxByteCount = 1024

    /// `count` random bytes (0...`maxByteCount`).
    ///
    /// Fails only when libcrypto's generator cannot be seeded, in which case no secret
    /// should be minted at all, so the error is passed on rather than papered over.
    public static func bytes(count: Int) throws(CryptoError) -> [UInt8] {
        precondition((0...maxByteCount).contains(count), "SecureRandom.bytes: count out of range")
        var bytes = [UInt8](repeating: 0, count: count)
        guard count > 0 else { return bytes }
        let status = bytes.withUnsafeMutableBufferPointer { RAND_bytes($0.baseAddress, Int32(count)) }
        guard status == 1 else { throw CryptoError.capture("RAND_bytes") }
        return bytes
    }
}
