/// Opaque bearer secrets: refresh tokens, and any other token Hearth hands out and later
/// looks up (docs/design.md §6).
///
/// A token is 256 random bits, written as unpadded base64url (43 characters, safe in URLs,
/// form bodies and JSON without escaping). Only `hash(_:)` of it is stored, so a leaked
/// database does not hand out live sessions; because the token itself has full entropy, a
/// plain SHA-256 is enough (no salt or stretching: there is nothing to guess).
public enum SecretToken {
    /// Random bytes per token.
    public static let byteCount = 32
    /// Characters per encoded token: ceil(32 · 8 / 6).
    public static let encodedLength = 43
    /// Characters in `hash(_:)`: SHA-256 as lower-case hex.
    public static let hashLength = 64

    /// A fresh random token.
    public static func generate() throws(CryptoError) -> String {
        Base64.urlEncode(try SecureRandom.bytes(count: byteCount))
    }

    /// Whether `token` has the shape `generate()` produces (43 strict base64url
    /// characters). Checking this before hashing keeps junk out of lookups and logs.
    public static func isWellFormed(_ token: some StringProtocol) -> Bool {
        token.utf8.count == encodedLength && Base64.urlDecode(token)?.count == byteCount
    }

    /// The value to store and to look the token up by: SHA-256 of its UTF-8, lower-case hex.
    public static func hash(_ token: some StringProtocol) -> String {
        Hex.encode(SHA256.hash(Array(token.utf8)))
    }
}
