/// Why a token was rejected by `TokenVerifier`. One case per check, so tests can pin each
/// rejection and the server can map them (e.g. `.expired` → `TOKEN_EXPIRED`, everything
/// else → `INVALID_ID_TOKEN`, docs/protocol/auth.md §4.1).
///
/// Nothing from the token is echoed: descriptions are fixed texts plus claim names Hearth
/// itself chose, so a log line never carries a bearer credential.
public enum TokenError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The three dot-separated parts of a compact JWS (RFC 7515 §7.1).
    public enum Part: String, Sendable, Hashable {
        case header, payload, signature
    }

    /// Longer than `TokenVerifier.maxTokenBytes`; nothing else was looked at.
    case tooLarge
    /// Not exactly three `.`-separated parts.
    case wrongPartCount
    /// A part is not strict unpadded base64url.
    case badBase64(Part)
    /// The header or payload is not valid JSON.
    case badJSON(Part)
    /// The header or payload is valid JSON but not an object.
    case notAnObject(Part)
    /// `alg` is missing or is not `EdDSA` (`none`, `HS256`, `RS256`, …). Checked before any
    /// key is looked up, so a key can never be used with another algorithm.
    case unsupportedAlgorithm
    /// The header has a `crit` member; Hearth understands no JWS extensions (RFC 7515 §4.1.11).
    case unsupportedCriticalHeader
    /// No `kid` string in the header.
    case missingKeyID
    /// `kid` names no key this verifier trusts.
    case unknownKeyID
    /// The signature does not verify (tampered header, payload or signature, or wrong key).
    case badSignature
    /// A required claim (`sub`, `iat`, `exp`) is absent.
    case missingClaim(String)
    /// A claim has the wrong type (e.g. `exp` not a number, `sub` not a string).
    case invalidClaim(String)
    /// `sub` is empty or longer than `TokenVerifier.maxSubjectLength`.
    case invalidSubject
    /// `exp` is earlier than now minus the leeway.
    case expired
    /// `iat` is later than now plus the leeway.
    case issuedInFuture
    /// `nbf` is later than now plus the leeway.
    case notYetValid
    /// `exp − iat` is longer than `TokenVerifier.maxLifetime`.
    case lifetimeTooLong
    /// `aud` is not the audience the verifier expects.
    case wrongAudience
    /// `iss` is not the issuer the verifier expects.
    case wrongIssuer

    public var description: String {
        switch self {
        case .tooLarge: return "token longer than \(TokenVerifier.maxTokenBytes) bytes"
        case .wrongPartCount: return "token is not three dot-separated parts"
        case .badBase64(let part): return "token \(part.rawValue) is not base64url"
        case .badJSON(let part): return "token \(part.rawValue) is not JSON"
        case .notAnObject(let part): return "token \(part.rawValue) is not a JSON object"
        case .unsupportedAlgorithm: return "token algorithm is not EdDSA"
        case .unsupportedCriticalHeader: return "token has unsupported critical header parameters"
        case .missingKeyID: return "token header has no kid"
        case .unknownKeyID: return "token kid is not a known key"
        case .badSignature: return "token signature is invalid"
        case .missingClaim(let name): return "token has no \(name) claim"
        case .invalidClaim(let name): return "token \(name) claim has the wrong type"
        case .invalidSubject: return "token sub must be 1 to \(TokenVerifier.maxSubjectLength) characters"
        case .expired: return "token has expired"
        case .issuedInFuture: return "token was issued in the future"
        case .notYetValid: return "token is not valid yet"
        case .lifetimeTooLong: return "token lifetime is longer than \(TokenVerifier.maxLifetime) seconds"
        case .wrongAudience: return "token audience is wrong"
        case .wrongIssuer: return "token issuer is wrong"
        }
    }
}
