import HearthAuth

/// Account settings (docs/design.md §6). Defaults follow Firebase's.
public struct AuthSettings: Sendable {
    /// Firebase's minimum password length (docs/protocol/auth.md §4.1).
    public static let defaultMinimumPasswordLength = 6
    /// ID token lifetime, seconds (`expiresIn: "3600"`).
    public static let defaultIDTokenLifetime: Int64 = 3600
    /// Longest accepted password (bytes): the hasher's own cap.
    public static let maximumPasswordLength = PasswordHasher.maxPasswordBytes
    /// Sign-in attempts allowed per client address and per account, per minute.
    public static let defaultSignInAttemptsPerMinute = 30
    /// How long a user's disabled flag and `validSince` are cached when checking tokens;
    /// changes made by this process apply at once, changes from `hearth users` within this.
    public static let defaultUserStatusCacheSeconds: Int64 = 2
    /// How long after a refresh token was rotated a retry with it (its answer was lost)
    /// gets the same new pair instead of revoking the family, as long as the new token has
    /// not been used. Past it, a used token is a replay.
    public static let refreshRetryWindowSeconds: Int64 = 60
    /// How old a sign-in (`auth_time`) may be for a password or email change (Firebase's
    /// "requires recent login").
    public static let defaultRecentSignInSeconds: Int64 = 300
    /// The longest `recentSignInSeconds` an operator may set: a day.
    public static let maximumRecentSignInSeconds = 86_400

    /// The `aud` of ID tokens and the tail of their `iss` (docs/protocol/auth.md §4.3).
    public var projectID = "hearth"
    public var allowAnonymousSignUp = true
    public var allowEmailSignUp = true
    public var minimumPasswordLength = AuthSettings.defaultMinimumPasswordLength
    public var idTokenLifetime = AuthSettings.defaultIDTokenLifetime
    public var signInAttemptsPerMinute = AuthSettings.defaultSignInAttemptsPerMinute
    public var userStatusCacheSeconds = AuthSettings.defaultUserStatusCacheSeconds
    public var recentSignInSeconds = AuthSettings.defaultRecentSignInSeconds
    /// Treat `Authorization: Bearer owner` (the Firebase emulator convention the Admin
    /// SDKs use, docs/protocol/admin-client.md §1) as an admin credential. Off by default;
    /// the server refuses to start with it unless it listens on a loopback address.
    public var acceptEmulatorOwner = false
    /// Service-account JSON files whose keys may sign custom tokens.
    public var customTokenServiceAccounts: [String] = []
    /// Email actions: the SMTP server (`smtp://host:port`,
    /// `smtp+starttls://user:pass@host:587`), the sender, where the links point, and the
    /// authorities trusted for STARTTLS (else the system's). Without `smtpURL` no mail is
    /// sent and `sendOobCode` answers `EMAIL_NOT_CONFIGURED`.
    public var smtpURL: String?
    public var mailFrom: String?
    public var actionLinkBase: String?
    public var smtpCAFile: String?
    /// The identity providers file (`--idp-providers`); nil: no provider sign-in.
    public var identityProvidersPath: String?
    /// Where provider keys are cached on disk (the data directory; set by the server).
    public var identityProviderKeyCache: String?
    /// The longest one provider key fetch may take, seconds (`IdentityProviders.fetchTimeoutSeconds`
    /// unless a test holds a fetch open for longer than a loaded machine's scheduling delays).
    public var identityProviderFetchTimeoutSeconds = IdentityProviders.fetchTimeoutSeconds

    public init() {}
}
