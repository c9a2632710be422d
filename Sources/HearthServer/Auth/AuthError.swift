import HearthAccounts
import HearthHTTP
import HearthJSON

/// An Identity Toolkit error (spec §4.2): HTTP 400 (mostly) with
/// `{"error":{"code":400,"message":"CODE[ : detail]","errors":[{"message":…,"domain":"global","reason":"invalid"}]}}`.
/// Clients split `message` at the first colon, so the code always comes first.
public struct AuthError: Error, Sendable, Equatable {
    public var status: Int
    public var code: String
    public var detail: String?
    public var retryAfter: Int?

    public init(_ code: String, detail: String? = nil, status: Int = 400, retryAfter: Int? = nil) {
        self.code = code
        self.detail = detail
        self.status = status
        self.retryAfter = retryAfter
    }

    public var message: String { detail.map { "\(code) : \($0)" } ?? code }

    public static let emailExists = AuthError("EMAIL_EXISTS")
    public static let invalidEmail = AuthError("INVALID_EMAIL")
    public static let missingEmail = AuthError("MISSING_EMAIL")
    public static let missingPassword = AuthError("MISSING_PASSWORD")
    public static let invalidLoginCredentials = AuthError("INVALID_LOGIN_CREDENTIALS")
    public static let userDisabled = AuthError("USER_DISABLED")
    public static let userNotFound = AuthError("USER_NOT_FOUND")
    public static let invalidIDToken = AuthError("INVALID_ID_TOKEN")
    public static let tokenExpired = AuthError("TOKEN_EXPIRED")
    public static let credentialTooOld = AuthError("CREDENTIAL_TOO_OLD_LOGIN_AGAIN")
    /// Email actions without an SMTP server configured (issue 15): never a silent 200.
    public static let emailNotConfigured = AuthError(
        "EMAIL_NOT_CONFIGURED", detail: "this server sends no mail (no smtpURL); its operator can print a link with hearth users reset-link", status: 501)
    public static let mailQueueFull = AuthError("TOO_MANY_ATTEMPTS_TRY_LATER", detail: "too much mail is waiting to be sent", status: 503, retryAfter: 30)
    public static let invalidRefreshToken = AuthError("INVALID_REFRESH_TOKEN")
    public static let missingRefreshToken = AuthError("MISSING_REFRESH_TOKEN")
    public static let invalidGrantType = AuthError("INVALID_GRANT_TYPE")
    public static let operationNotAllowed = AuthError("OPERATION_NOT_ALLOWED")
    public static let adminOnlyOperation = AuthError("ADMIN_ONLY_OPERATION")
    public static let invalidJSON = AuthError("INVALID_JSON_PAYLOAD", detail: "the body must be a JSON object")
    public static let tooManyAttempts = AuthError("TOO_MANY_ATTEMPTS_TRY_LATER", status: 429)
    public static let internalError = AuthError("INTERNAL_ERROR", status: 500)
    /// The data volume is full: the account or session was not saved (HTTP 507).
    public static let storageFull = AuthError("STORAGE_FULL", detail: "the server's disk is full; try again later", status: 507)

    /// An unexpected failure below the service: a full disk says so, anything else is
    /// an internal error (its cause stays out of the response).
    static func unexpected(_ error: any Error) -> AuthError {
        if AccountStoreFailure.isStorageFull(error) { return .storageFull }
        return .internalError
    }
    public static let notFound = AuthError("NOT_FOUND", status: 404)

    public static func weakPassword(minimum: Int) -> AuthError {
        AuthError("WEAK_PASSWORD", detail: "Password should be at least \(minimum) characters")
    }

    public var response: HTTPResponse {
        var headers = HTTPHeaders()
        headers.add("Content-Type", JSONResponse.contentType)
        headers.add("Access-Control-Allow-Origin", "*")
        if let retryAfter { headers.add("Retry-After", String(retryAfter)) }
        let body: JSONValue = .object(["error": .object([
            "code": .int(Int64(status)),
            "message": .string(message),
            "errors": .array([.object(["message": .string(message), "domain": .string("global"), "reason": .string("invalid")])]),
        ])])
        return HTTPResponse(status: status, headers: headers, body: JSONWriter.write(body))
    }
}
