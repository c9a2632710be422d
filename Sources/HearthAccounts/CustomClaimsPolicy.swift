import HearthAuth
import HearthJSON

/// What an admin may store as a user's custom claims (`customAttributes` of
/// `projects/P/accounts:update`, the Admin SDK's `set_custom_user_claims`). Checked when
/// they are set, so that every later ID token can be minted with them.
///
/// Firebase's own checks, plus Hearth's: every name `IDTokenClaims` writes (a custom claim
/// can never override `user_id` or `email`) and the operator marker `hearth_admin` are
/// reserved too.
public enum CustomClaimsPolicy {
    /// Largest accepted `customAttributes`, bytes of the JSON text as sent and as stored
    /// compactly: Firebase's limit (`MAX_CLAIMS_PAYLOAD_SIZE` in the Admin SDKs).
    public static let maxBytes = IDTokenClaims.maxCustomClaimsBytes
    /// Names refused with `FORBIDDEN_CLAIM : <name>`.
    public static let reservedNames = IDTokenClaims.reservedClaimNames.union([OperatorIdentity.claim])

    /// The claims in `value`: a JSON object, or a string holding one (what the SDKs send).
    /// Errors: `CLAIMS_TOO_LARGE`, `INVALID_CLAIMS : <why>`, `FORBIDDEN_CLAIM : <name>`.
    public static func parse(_ value: JSONValue) throws(AuthError) -> [JSONKey: JSONValue] {
        let claims: JSONValue
        switch value {
        case .string(let text):
            guard text.utf8.count <= maxBytes else { throw tooLarge }
            guard let parsed = try? JSONParser.parse(Array(text.utf8)) else {
                throw AuthError("INVALID_CLAIMS", detail: "customAttributes must be a JSON object")
            }
            claims = parsed
        default:
            claims = value
        }
        guard let members = claims.objectValue else { throw AuthError("INVALID_CLAIMS", detail: "customAttributes must be a JSON object") }
        if let reserved = members.keys.strings.sorted().first(where: reservedNames.contains) {
            throw AuthError("FORBIDDEN_CLAIM", detail: reserved)
        }
        do {
            return try IDTokenClaims.validateCustomClaims(claims)
        } catch .customClaimsTooLarge {
            throw tooLarge
        } catch .reservedClaim(let name) {
            throw AuthError("FORBIDDEN_CLAIM", detail: name)
        } catch {
            throw AuthError("INVALID_CLAIMS", detail: error.description)
        }
    }

    static var tooLarge: AuthError { AuthError("CLAIMS_TOO_LARGE", detail: "custom claims must not exceed \(maxBytes) bytes") }
}
