/// A rotated refresh token's successor, sealed so that only the rotated token opens it
/// (a client whose refresh answer was lost retries with the token it still has,
/// and gets the same new pair instead of being taken for a thief).
///
/// The successor's 32 random bytes are XORed with SHA-256 of a fixed label and the rotated
/// token. The rotated token is 256 random bits that the server stores only as a plain
/// SHA-256 (`SecretToken.hash`), so the database alone opens nothing: the pad is a
/// different hash of a secret it does not hold, used for exactly one message.
public enum RefreshSeal {
    static let label = Array("hearth.refresh.successor.v1:".utf8)

    /// `successor` sealed under `token`, as lower-case hex; nil when either is not a
    /// well-formed `SecretToken`.
    public static func seal(_ successor: String, under token: String) -> String? {
        guard SecretToken.isWellFormed(token), let bytes = Base64.urlDecode(successor), bytes.count == SecretToken.byteCount else { return nil }
        return Hex.encode(zip(bytes, pad(token)).map { $0 ^ $1 })
    }

    /// The successor sealed under `token`; nil when `sealed` is not one.
    public static func open(_ sealed: String, with token: String) -> String? {
        guard SecretToken.isWellFormed(token), let bytes = Hex.decode(sealed), bytes.count == SecretToken.byteCount else { return nil }
        return Base64.urlEncode(zip(bytes, pad(token)).map { $0 ^ $1 })
    }

    static func pad(_ token: String) -> [UInt8] {
        SHA256.hash(label + Array(token.utf8))
    }
}
