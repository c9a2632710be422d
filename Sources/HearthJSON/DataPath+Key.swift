/// Key validation: what a single path segment / object key may be (docs/protocol/rest.md
/// §1.7).
extension DataPath {
    /// The longest key, in UTF-8 bytes (docs/protocol/rest.md §1.7, Firebase "Limits").
    public static let maxKeyBytes = 768

    /// Checks one key: non-empty, at most `maxKeyBytes` bytes of UTF-8, and none of
    /// `. $ # [ ] /` or ASCII control characters U+0000–U+001F, U+007F (js-sdk
    /// `INVALID_KEY_REGEX_`).
    ///
    /// The pseudo-keys `.sv`, `.priority` and `.value` fail here on purpose: they are not
    /// path segments, and `FirebaseTree` handles them before calling this.
    public static func validateKey(_ key: String) throws(PathError) {
        if let problem = keyProblem(key) {
            throw .invalidKey(key: key, problem: problem)
        }
    }

    /// True when `key` is a valid key.
    public static func isValidKey(_ key: String) -> Bool {
        keyProblem(key) == nil
    }

    /// The first problem with `key`, or nil when it is valid.
    static func keyProblem(_ key: String) -> PathError.KeyProblem? {
        let utf8 = key.utf8
        let count = utf8.count
        if count == 0 { return .empty }
        for byte in utf8 where isForbiddenKeyByte(byte) {
            return .forbiddenCharacter(Unicode.Scalar(byte))
        }
        if count > maxKeyBytes { return .tooLong(bytes: count) }
        return nil
    }

    /// Every forbidden character is ASCII, so a byte test is exact (UTF-8 multi-byte
    /// sequences never contain ASCII bytes).
    @inline(__always)
    static func isForbiddenKeyByte(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x00...0x1F, 0x7F,
            UInt8(ascii: "."), UInt8(ascii: "$"), UInt8(ascii: "#"),
            UInt8(ascii: "["), UInt8(ascii: "]"), UInt8(ascii: "/"):
            return true
        default:
            return false
        }
    }
}
