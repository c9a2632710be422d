import HearthAuth

/// What every kind of account (Firebase users, the console's administrators) shares
/// about its credentials.
public enum Credentials {
    /// A fixed hash verified when the email is unknown, so both failures cost the same.
    public static let decoyHash = (try? PasswordHasher().hash("hearth-decoy-password")) ?? ""

    /// `email` lowercased when it is one plausible address, else nil.
    public static func normalizedEmail(_ email: String) -> String? {
        let lower = email.lowercased()
        let parts = lower.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, parts[1].contains("."), !parts[1].hasPrefix("."), !parts[1].hasSuffix("."),
              lower.utf8.count <= 320, !lower.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7F }) else {
            return nil
        }
        return lower
    }
}
