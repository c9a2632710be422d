import HearthJSON

/// The JSON Web Key Set served at `/.well-known/jwks.json` (RFC 7517 §5; docs/design.md
/// §6), so other services can verify Hearth's ID tokens without calling it.
public enum JWKS {
    /// `{"keys":[<jwk>, …]}` in the order given (current key first, by convention).
    public static func document(_ keys: [VerifyingKey]) -> JSONValue {
        ["keys": .array(keys.map(\.jwk))]
    }

    /// The keys of a JWKS document by `kid`, for `TokenVerifier(publicKeys:)`. Every entry
    /// must be a valid Ed25519 JWK; one bad entry rejects the document.
    public static func keys(from document: JSONValue) throws(KeyError) -> [String: VerifyingKey] {
        guard case .array(let entries)? = document.objectValue?["keys"] else { throw .invalidJWK }
        var keys: [String: VerifyingKey] = [:]
        for entry in entries {
            let key = try VerifyingKey(jwk: entry)
            keys[key.kid] = key
        }
        return keys
    }
}
