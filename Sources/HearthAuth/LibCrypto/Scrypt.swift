import COpenSSL

/// Raw scrypt (RFC 7914) through libcrypto's `EVP_PBE_scrypt`.
///
/// Callers validate parameters first (`ScryptParameters`, `FirebaseScrypt`); this only
/// computes. `maxMemory` is passed explicitly because libcrypto's default cap (`maxmem = 0`
/// means 32 MiB) rejects N = 2^15, r = 8 (docs/linux-notes.md).
enum Scrypt {
    /// The bytes libcrypto's scrypt allocates for these parameters: the B array
    /// (`p * 128 * r`) plus V and its scratch (`128 * r * (N + 2)`), the sum it checks
    /// against `maxmem`. Nil when the product overflows.
    static func memoryRequired(n: UInt64, r: UInt64, p: UInt64) -> UInt64? {
        let (nPlus2, o1) = n.addingReportingOverflow(2)
        let (blocks, o2) = nPlus2.addingReportingOverflow(p)
        let (perBlock, o3) = r.multipliedReportingOverflow(by: 128)
        let (total, o4) = blocks.multipliedReportingOverflow(by: perBlock)
        return o1 || o2 || o3 || o4 ? nil : total
    }

    /// `length` bytes of scrypt(password, salt, N, r, p).
    static func deriveKey(
        password: some Collection<UInt8>, salt: some Collection<UInt8>,
        n: UInt64, r: UInt64, p: UInt64, length: Int, maxMemory: UInt64
    ) throws(CryptoError) -> [UInt8] {
        precondition(length > 0, "scrypt output length must be positive")
        let password = Array(password)
        let salt = Array(salt)
        var key = [UInt8](repeating: 0, count: length)
        // A one-byte stand-in keeps pointers non-nil for empty passwords and salts (RFC 7914
        // §12 vector 1 has both); the lengths passed are still zero.
        var empty: UInt8 = 0
        let status = password.withUnsafeBufferPointer { pw in
            salt.withUnsafeBufferPointer { s in
                key.withUnsafeMutableBufferPointer { out in
                    withUnsafeMutablePointer(to: &empty) { placeholder in
                        let pwPointer = UnsafeRawPointer(pw.baseAddress ?? UnsafePointer(placeholder))
                        return EVP_PBE_scrypt(
                            pwPointer.assumingMemoryBound(to: CChar.self), pw.count,
                            s.baseAddress ?? UnsafePointer(placeholder), s.count,
                            n, r, p, maxMemory,
                            out.baseAddress, out.count)
                    }
                }
            }
        }
        guard status == 1 else { throw CryptoError.capture("EVP_PBE_scrypt") }
        return key
    }
}
