/// An Identity Toolkit error (docs/protocol/auth.md §4.2) as the account core raises it:
/// Firebase's error code, an optional detail, and what kind of failure it is. No HTTP
/// status here: the HTTP boundary (HearthServer's `AuthError.status`, `AuthError.response`)
/// maps the kind to one and writes Firebase's error JSON. Clients split the message at the
/// first colon, so the code always comes first.
public struct AuthError: Error, Sendable, Equatable {
    /// What went wrong, for the boundary to answer with (HTTP: 400, 401, … 507).
    public enum Kind: Sendable, Equatable {
        /// The request was refused (Firebase's usual answer; HTTP 400).
        case invalidRequest
        /// No usable credential (401).
        case unauthenticated
        /// A credential without the right to this (403).
        case forbidden
        /// No such thing (404).
        case notFound
        /// The operation exists, with another method (405).
        case methodNotAllowed
        /// Too many attempts from this address or for this account (429).
        case rateLimited
        /// A failure below the service; its cause stays out of the answer (500).
        case internalFailure
        /// A feature this server was not configured for (501).
        case notConfigured
        /// Try again later (503).
        case unavailable
        /// The data volume is full (507).
        case storageFull
    }

    public var code: String
    public var detail: String?
    public var kind: Kind
    /// Seconds after which a retry may succeed, when known.
    public var retryAfter: Int?

    public init(_ code: String, detail: String? = nil, kind: Kind = .invalidRequest, retryAfter: Int? = nil) {
        self.code = code
        self.detail = detail
        self.kind = kind
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
    /// Email actions without an SMTP server configured: never a silent 200.
    public static let emailNotConfigured = AuthError(
        "EMAIL_NOT_CONFIGURED", detail: "this server sends no mail (no smtpURL); its operator can print a link with hearth users reset-link",
        kind: .notConfigured)
    public static let mailQueueFull = AuthError("TOO_MANY_ATTEMPTS_TRY_LATER", detail: "too much mail is waiting to be sent", kind: .unavailable,
                                                retryAfter: 30)
    public static let invalidRefreshToken = AuthError("INVALID_REFRESH_TOKEN")
    public static let missingRefreshToken = AuthError("MISSING_REFRESH_TOKEN")
    public static let invalidGrantType = AuthError("INVALID_GRANT_TYPE")
    public static let operationNotAllowed = AuthError("OPERATION_NOT_ALLOWED")
    public static let adminOnlyOperation = AuthError("ADMIN_ONLY_OPERATION")
    public static let invalidJSON = AuthError("INVALID_JSON_PAYLOAD", detail: "the body must be a JSON object")
    public static let tooManyAttempts = AuthError("TOO_MANY_ATTEMPTS_TRY_LATER", kind: .rateLimited)
    public static let internalError = AuthError("INTERNAL_ERROR", kind: .internalFailure)
    /// The data volume is full: the account or session was not saved.
    public static let storageFull = AuthError("STORAGE_FULL", detail: "the server's disk is full; try again later", kind: .storageFull)

    /// An unexpected failure below the service: a full disk says so, anything else is
    /// an internal error (its cause stays out of the response).
    public static func unexpected(_ error: any Error) -> AuthError {
        if AccountStoreFailure.isStorageFull(error) { return .storageFull }
        return .internalError
    }
    public static let notFound = AuthError("NOT_FOUND", kind: .notFound)

    public static func weakPassword(minimum: Int) -> AuthError {
        AuthError("WEAK_PASSWORD", detail: "Password should be at least \(minimum) characters")
    }
}
