import HearthJSON

/// A provider's published keys, by `kid`.
public enum ProviderKeySet {
    /// The most keys one document may hold.
    public static let maxKeys = 64

    /// The RS256 and ES256 signing keys of a JWK Set (`{"keys": [...]}`); keys of other
    /// types are skipped. Refused: not a JWK Set, too many keys, or no usable key at all.
    public static func keys(jwks bytes: [UInt8]) -> [String: ProviderKey]? {
        guard case .object(let root)? = try? JSONParser.parse(bytes), case .array(let entries)? = root["keys"],
              entries.count <= maxKeys else { return nil }
        var keys: [String: ProviderKey] = [:]
        for entry in entries {
            if let key = ProviderKey(jwk: entry) { keys[key.kid] = key }
        }
        return keys.isEmpty ? nil : keys
    }

    /// The keys of Google's certificate document (`{"<kid>": "<PEM certificate>", …}`).
    public static func keys(certificates bytes: [UInt8]) -> [String: ProviderKey]? {
        guard case .object(let root)? = try? JSONParser.parse(bytes), root.count <= maxKeys else { return nil }
        var keys: [String: ProviderKey] = [:]
        for (kid, value) in root {
            guard let pem = value.stringValue, let key = ProviderKey(certificatePEM: pem, kid: kid.string) else { return nil }
            keys[key.kid] = key
        }
        return keys.isEmpty ? nil : keys
    }
}
