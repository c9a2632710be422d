import HearthJSON

/// The unsigned ID tokens the Firebase SDKs make for the emulators:
/// `createMockUserToken` in the SDKs' util package, used by `@firebase/rules-unit-testing`'s
/// `authenticatedContext(uid, claims)` (docs/protocol/emulator.md §4.7). The header is
/// `{"alg":"none","type":"JWT"}`, the signature part empty, the claims any uid (`sub` =
/// `user_id`) and claims, with `iat: 0` and `exp: 3600`. Nothing here decides whether such a
/// token may be honoured: only emulator mode, from loopback, accepts it (the caller decides).
public enum EmulatorMockToken {
    /// The claims of `token` when it is an unsigned mock token with a non-empty `sub` (or
    /// `user_id`) of at most `maxUIDBytes`; nil for anything else (a signed token, a bad one).
    public static func claims(_ token: String) -> JSONValue? {
        guard isUnsigned(token), let decoded = DecodedJWT(token) else { return nil }
        var claims = decoded.claims
        if claims["sub"] == nil, let uid = claims["user_id"] { claims["sub"] = uid }
        guard let uid = claims["sub"]?.stringValue, !uid.isEmpty, uid.utf8.count <= maxUIDBytes else { return nil }
        return .object(claims)
    }

    /// The longest uid a mock token may carry (Firebase Auth's own uid limit).
    public static let maxUIDBytes = 128

    /// True when `token` is a compact JWT whose header says `alg: none` and whose signature
    /// part is empty: what an emulator-mode caller must send only from this machine.
    public static func isUnsigned(_ token: String) -> Bool {
        guard token.utf8.count <= TokenVerifier.maxTokenBytes, token.hasSuffix("."),
              let decoded = DecodedJWT(token), decoded.signature.isEmpty else { return false }
        return decoded.header["alg"] == .string("none")
    }
}
