import COpenSSL

/// Comparisons of secrets whose running time does not depend on where the inputs differ.
///
/// `==` on arrays or strings stops at the first differing byte, so its timing tells an
/// attacker how much of a guessed MAC, hash or token was right. These use libcrypto's
/// `CRYPTO_memcmp`, which always reads every byte.
///
/// The *length* is not hidden: inputs of different lengths compare unequal at once. Every
/// caller compares fixed-length values (digests, derived keys, hashed tokens), so the length
/// is public anyway.
public enum ConstantTime {
    /// Whether `a` and `b` hold the same bytes.
    public static func equals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        guard !a.isEmpty else { return true }
        return a.withUnsafeBytes { x in
            b.withUnsafeBytes { y in CRYPTO_memcmp(x.baseAddress, y.baseAddress, x.count) == 0 }
        }
    }

    /// Whether `a` and `b` have the same UTF-8 bytes (no Unicode normalisation: secrets
    /// are compared as stored).
    public static func equals(_ a: some StringProtocol, _ b: some StringProtocol) -> Bool {
        equals(Array(a.utf8), Array(b.utf8))
    }
}
