import HearthJSON

/// A compact JWT split into its parts, unverified: header and claims as JSON objects, the
/// bytes the signature covers, and the signature (empty for an unsigned token). Shared by
/// the RS256 verifiers of custom tokens and of the admin grant.
struct DecodedJWT {
    let header: [JSONKey: JSONValue]
    let claims: [JSONKey: JSONValue]
    let signingInput: [UInt8]
    let signature: [UInt8]

    /// nil unless `token` is three base64url parts (at most `TokenVerifier.maxTokenBytes`)
    /// with JSON objects in the first two and no `crit` header.
    init?(_ token: String) {
        let bytes = Array(token.utf8)
        guard bytes.count <= TokenVerifier.maxTokenBytes else { return nil }
        let parts = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3,
              let headerBytes = Base64.urlDecode(String(decoding: parts[0], as: UTF8.self)),
              case .object(let header)? = try? JSONParser.parse(headerBytes),
              let payloadBytes = Base64.urlDecode(String(decoding: parts[1], as: UTF8.self)),
              case .object(let claims)? = try? JSONParser.parse(payloadBytes),
              header["crit"] == nil else { return nil }
        let signature = parts[2].isEmpty ? [] : Base64.urlDecode(String(decoding: parts[2], as: UTF8.self))
        guard let signature else { return nil }
        (self.header, self.claims, self.signature) = (header, claims, signature)
        signingInput = Array(bytes[..<parts[1].endIndex])
    }
}
