import HearthAuth
import HearthJSON
import HearthStore

/// A signed-in session as the Identity Toolkit returns it.
public struct Session: Sendable {
    public var user: UserRecord
    public var idToken: String
    public var refreshToken: String
    public var expiresIn: Int64

    public init(user: UserRecord, idToken: String, refreshToken: String, expiresIn: Int64) {
        self.user = user
        self.idToken = idToken
        self.refreshToken = refreshToken
        self.expiresIn = expiresIn
    }
}

/// Account operations (docs/design.md §6), shared by the REST endpoints and the
/// `hearth users` CLI. Every method blocks (the store, scrypt): call from a work queue or
/// the hashing pool.
public struct AccountService: Sendable {
    public let accounts: any AccountStore
    public let keys: KeyRing
    public let settings: AuthSettings
    public let hasher: PasswordHasher
    /// Milliseconds since the epoch.
    public let clock: @Sendable () -> Int64
    /// The service accounts whose custom tokens are trusted (`customTokenServiceAccounts`).
    public let serviceAccounts: [ServiceAccountKey]
    /// The identity providers whose ID tokens sign users in; nil: none.
    public let identityProviders: IdentityProviders?

    public init(accounts: any AccountStore, keys: KeyRing, settings: AuthSettings,
                hasher: PasswordHasher = PasswordHasher(),
                clock: @escaping @Sendable () -> Int64 = WallClock.milliseconds,
                serviceAccounts: [ServiceAccountKey] = [], identityProviders: IdentityProviders? = nil) {
        self.serviceAccounts = serviceAccounts
        self.identityProviders = identityProviders
        self.accounts = accounts
        self.keys = keys
        self.settings = settings
        self.hasher = hasher
        self.clock = clock
    }

    /// 28 characters, like Firebase uids (docs/protocol/auth.md §4.1).
    static let uidAlphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")

    static func newUID() throws -> String {
        let bytes = try SecureRandom.bytes(count: 28)
        return String(bytes.map { uidAlphabet[Int($0) % uidAlphabet.count] })
    }

    // MARK: Sign-up and sign-in

    public func signUpAnonymously() throws(AuthError) -> Session {
        guard settings.allowAnonymousSignUp else { throw .adminOnlyOperation }
        let now = clock()
        let user = UserRecord(uid: try wrap { try Self.newUID() }, provider: .anonymous, createdAt: now, validSince: now / 1000)
        try wrap { try accounts.insert(user) }
        return try startSession(for: user, now: now)
    }

    public func signUp(email rawEmail: String?, password: String?, displayName: String? = nil) throws(AuthError) -> Session {
        guard settings.allowEmailSignUp else { throw .operationNotAllowed }
        let (email, password) = try validate(email: rawEmail, password: password)
        let now = clock()
        var user = UserRecord(uid: try wrap { try Self.newUID() }, email: email, passwordHash: try hash(password),
                              provider: .password, createdAt: now, validSince: now / 1000)
        user.displayName = displayName
        user.passwordUpdatedAt = now
        do {
            try accounts.insert(user)
        } catch AccountStoreError.duplicateEmail {
            throw .emailExists
        } catch {
            throw .unexpected(error)
        }
        return try startSession(for: user, now: now)
    }

    /// One answer for an unknown email and a wrong password (no account enumeration).
    public func signIn(email rawEmail: String?, password: String?) throws(AuthError) -> Session {
        guard let rawEmail, !rawEmail.isEmpty else { throw .missingEmail }
        guard let password, !password.isEmpty else { throw .missingPassword }
        let email = rawEmail.lowercased()
        guard var user = try wrap({ try accounts.user(email: email) }), let stored = user.passwordHash else {
            _ = try? hasher.verify(password, against: Credentials.decoyHash)  // same work as a real check
            throw .invalidLoginCredentials
        }
        guard (try? hasher.verifyStored(password, against: stored)) == true else { throw .invalidLoginCredentials }
        guard !user.disabled else { throw .userDisabled }
        let now = clock()
        user.lastLoginAt = now
        if hasher.needsRehash(stored) { user.passwordHash = try hash(password) }
        try wrap { try accounts.update(user) }
        return try startSession(for: user, now: now)
    }


    // MARK: Tokens

    /// Checks an ID token and the user behind it (exists, enabled, token not older than
    /// `validSince`). Returns the user.
    public func user(forIDToken token: String?) throws(AuthError) -> UserRecord {
        try signedIn(forIDToken: token).user
    }

    /// As `user(forIDToken:)`, with the token's `auth_time` (seconds; its `iat` when absent).
    public func signedIn(forIDToken token: String?) throws(AuthError) -> (user: UserRecord, authTime: Int64) {
        guard let token, !token.isEmpty else { throw .invalidIDToken }
        let claims = try verify(token)
        guard let uid = claims.objectValue?["sub"]?.stringValue else { throw .invalidIDToken }
        guard let user = try wrap({ try accounts.user(uid: uid) }) else { throw .userNotFound }
        guard !user.disabled else { throw .userDisabled }
        guard case .int(let iat)? = claims.objectValue?["iat"] else { throw .invalidIDToken }
        if iat < user.validSince { throw .tokenExpired }
        if case .int(let authTime)? = claims.objectValue?["auth_time"] { return (user, authTime) }
        return (user, iat)
    }

    /// Refuses a password or email change from a sign-in older than
    /// `settings.recentSignInSeconds` (`CREDENTIAL_TOO_OLD_LOGIN_AGAIN`). An account with
    /// no password (anonymous) has nothing to sign in again with: linking it is allowed.
    public func requireRecentSignIn(_ user: UserRecord, authTime: Int64, for changes: Changes) throws(AuthError) {
        let sensitive = changes.password != nil || (changes.email != nil && changes.email?.lowercased() != user.email)
        guard sensitive, user.passwordHash != nil else { return }
        if clock() / 1000 - authTime > settings.recentSignInSeconds { throw .credentialTooOld }
    }

    /// A verifier over the current keys that tells time by this service's clock (the one
    /// tokens are issued by), not the system's: tests pin both.
    private func tokenVerifier() -> TokenVerifier {
        let clock = self.clock
        return TokenVerifier(publicKeys: keys.verifyingKeys, clock: UnixClock { clock() / 1000 }, audience: settings.projectID,
                             issuer: IDTokenClaims.issuerPrefix + settings.projectID)
    }

    /// Verified claims of an ID token (signature, algorithm, expiry; docs/protocol/auth.md
    /// §4.3).
    public func verify(_ token: String) throws(AuthError) -> JSONValue {
        do {
            return try tokenVerifier().verify(token)
        } catch .unknownKeyID {
            guard let kid = Self.kid(of: token), keys.reload(ifUnknown: kid) else { throw .invalidIDToken }
            do { return try tokenVerifier().verify(token) } catch .expired { throw .tokenExpired } catch { throw .invalidIDToken }
        } catch .expired {
            throw .tokenExpired
        } catch {
            throw .invalidIDToken
        }
    }

    /// The `kid` in a token's header, without verifying anything.
    static func kid(of token: String) -> String? {
        guard let header = token.split(separator: ".", omittingEmptySubsequences: false).first,
              let bytes = Base64.decode(header, alphabet: .url, padding: .none),
              case .object(let fields)? = try? JSONParser.parse(bytes) else { return nil }
        return fields["kid"]?.stringValue
    }

    /// Uses a refresh token: rotates it (docs/protocol/auth.md §4.1 `/v1/token`); a
    /// replayed token revokes its whole family. A retry within
    /// `AuthSettings.refreshRetryWindowSeconds` of the rotation, before the new token was
    /// used, answers the same pair again (its answer was lost on the way). ID tokens keep
    /// the family's sign-in time as `auth_time`.
    public func refresh(_ token: String?) throws(AuthError) -> Session {
        guard let token, !token.isEmpty else { throw .missingRefreshToken }
        guard SecretToken.isWellFormed(token) else { throw .invalidRefreshToken }
        let next = try wrap { try SecretToken.generate() }
        guard let sealed = RefreshSeal.seal(next, under: token) else { throw .invalidRefreshToken }
        let now = clock()
        let rotation = RefreshRotation(hash: SecretToken.hash(token), newHash: SecretToken.hash(next), sealedNew: sealed, at: now,
                                       retryWindow: AuthSettings.refreshRetryWindowSeconds * 1000)
        switch try wrap({ try accounts.rotateRefreshToken(rotation) }) {
        case .rotated(let uid, let signIn):
            guard let user = try wrap({ try accounts.user(uid: uid) }), !user.disabled else { throw .userDisabled }
            return Session(user: user, idToken: try idToken(for: user, now: now, signIn: signIn), refreshToken: next,
                           expiresIn: settings.idTokenLifetime)
        case .retried(let uid, let signIn, let rotatedAt, let sealedSuccessor):
            guard let successor = RefreshSeal.open(sealedSuccessor, with: token) else { throw .invalidRefreshToken }
            guard let user = try wrap({ try accounts.user(uid: uid) }), !user.disabled else { throw .userDisabled }
            // Issued as of the rotation: the same ID token as the lost answer's while the
            // user is unchanged (Ed25519 signatures are deterministic).
            return Session(user: user, idToken: try idToken(for: user, now: rotatedAt, signIn: signIn), refreshToken: successor,
                           expiresIn: settings.idTokenLifetime)
        case .reused, .invalid:
            throw .invalidRefreshToken
        }
    }

    /// An ID token for `user` continuing `signIn`: its `auth_time`, provider and claims.
    func idToken(for user: UserRecord, now: Int64, signIn: SignInRecord) throws(AuthError) -> String {
        var claims: [JSONKey: JSONValue] = [:]
        if let text = signIn.claims, case .object(let object)? = try? JSONParser.parse(text) { claims = object }
        return try idToken(for: user, now: now, authTime: signIn.at / 1000, signInProvider: signIn.provider, extraClaims: claims)
    }

    /// An ID token for `user`, with their custom claims (and `extraClaims` over them).
    public func idToken(for user: UserRecord, now: Int64, lifetime: Int64? = nil, authTime: Int64? = nil, signInProvider: String? = nil,
                        extraClaims: [JSONKey: JSONValue] = [:]) throws(AuthError) -> String {
        var custom: [JSONKey: JSONValue] = [:]
        if let text = user.customClaims, case .object(let object)? = try? JSONParser.parse(text) { custom = object }
        custom.merge(extraClaims) { $1 }
        // Never issued before `validSince`, which a revocation sets one second ahead so
        // that tokens from the revoking second itself are refused.
        let claims = IDTokenClaims(
            projectID: settings.projectID, uid: user.uid, issuedAt: max(now / 1000, user.validSince),
            authTime: authTime.map { min($0, max(now / 1000, user.validSince)) }, lifetime: lifetime ?? settings.idTokenLifetime,
            signInProvider: signInProvider ?? Self.signInProvider(of: user),
            email: user.email, emailVerified: user.emailVerified, name: user.displayName, picture: user.photoURL,
            identities: Self.identities(of: user), customClaims: custom)
        do {
            return try TokenSigner(key: keys.signingKey).sign(claims: try claims.json())
        } catch {
            throw AuthError("INVALID_CLAIMS", detail: "\(error)")
        }
    }

    static func signInProvider(of user: UserRecord) -> String {
        switch user.provider {
        case .anonymous: return IDTokenClaims.anonymousProvider
        case .password: return "password"
        case .custom: return IDTokenClaims.customProvider
        case .federated: return user.providerLinks.first?.providerID ?? IDTokenClaims.customProvider
        }
    }

    func startSession(for user: UserRecord, now: Int64, provider: String? = nil, claims: String? = nil) throws(AuthError) -> Session {
        let refresh = try wrap { try SecretToken.generate() }
        let signIn = SignInRecord(at: now, provider: provider, claims: claims)
        try wrap { try accounts.addRefreshToken(hash: SecretToken.hash(refresh), uid: user.uid, family: try Self.newUID(), signIn: signIn) }
        return Session(user: user, idToken: try idToken(for: user, now: now, signIn: signIn), refreshToken: refresh, expiresIn: settings.idTokenLifetime)
    }

    // MARK: Custom tokens

    /// The verifier over Hearth's current keys and the configured service accounts.
    func customTokenVerifier(allowUnsigned: Bool) -> CustomTokenVerifier {
        let clock = self.clock
        return CustomTokenVerifier(hearthKeys: keys.verifyingKeys, serviceAccounts: serviceAccounts, allowUnsigned: allowUnsigned,
                                   reservedClaims: CustomClaimsPolicy.reservedNames, clock: UnixClock { clock() / 1000 })
    }

    /// Signs in with a custom token: the user is created on first sign-in (provider
    /// `custom`); the session's ID tokens carry the token's claims (over the user's own)
    /// and `sign_in_provider: custom`, across refreshes. `allowUnsigned`: the emulator
    /// mode's unsigned tokens, from loopback only (the caller decides).
    public func signIn(customToken token: String?, allowUnsigned: Bool) throws(AuthError) -> (session: Session, isNewUser: Bool) {
        guard let token, !token.isEmpty else { throw AuthError("MISSING_CUSTOM_TOKEN") }
        let verified: CustomTokenVerifier.Verified
        do {
            verified = try customTokenVerifier(allowUnsigned: allowUnsigned).verify(token)
        } catch {
            throw AuthError("INVALID_CUSTOM_TOKEN", detail: error.description)
        }
        let now = clock()
        var isNew = false
        var user: UserRecord
        if let existing = try wrap({ try accounts.user(uid: verified.uid) }) {
            user = existing
        } else {
            user = UserRecord(uid: verified.uid, provider: .custom, createdAt: now, validSince: now / 1000)
            do {
                try accounts.insert(user)
                isNew = true
            } catch AccountStoreError.duplicateUID {
                // Signed in at the same moment elsewhere: that one created it.
                guard let created = try wrap({ try accounts.user(uid: verified.uid) }) else { throw .userNotFound }
                user = created
            } catch {
                throw .unexpected(error)
            }
        }
        guard !user.disabled else { throw .userDisabled }
        user.lastLoginAt = now
        try wrap { try accounts.update(user) }
        let claims = verified.claims.isEmpty ? nil : JSONWriter.string(.object(verified.claims))
        return (try startSession(for: user, now: now, provider: IDTokenClaims.customProvider, claims: claims), isNew)
    }

    /// A custom token for `uid` signed by Hearth's current key (`hearth token --custom`).
    public func mintCustomToken(uid: String, claims: [JSONKey: JSONValue]) throws(AuthError) -> String {
        guard (1...CustomTokenVerifier.maxUIDLength).contains(uid.count) else { throw AuthError("INVALID_UID") }
        if let name = claims.keys.strings.sorted().first(where: CustomClaimsPolicy.reservedNames.contains) {
            throw AuthError("FORBIDDEN_CLAIM", detail: name)
        }
        guard JSONWriter.write(.object(claims)).count <= IDTokenClaims.maxCustomClaimsBytes else { throw AuthError("CLAIMS_TOO_LARGE") }
        do {
            return try CustomTokenVerifier.mint(uid: uid, claims: claims, key: keys.signingKey, now: clock() / 1000)
        } catch {
            throw AuthError("INVALID_CLAIMS", detail: "\(error)")
        }
    }

    // MARK: Changes

    public struct Changes: Sendable {
        public var email: String?
        public var password: String?
        public var displayName: String?
        public var photoURL: String?
        public var deleteDisplayName = false
        public var deletePhotoURL = false
        public var disabled: Bool?
        /// Admin only (`projects/P/accounts:update`); the user-facing endpoint never sets these.
        public var emailVerified: Bool?
        /// Custom claims checked by `CustomClaimsPolicy.parse`; an empty object clears them.
        public var customClaims: [JSONKey: JSONValue]?
        /// `validSince` in seconds (admin `revoke_refresh_tokens`): see `apply`.
        public var validSince: Int64?
        /// Providers to unlink (`deleteProvider`): identity providers' ids
        /// (`phone` does nothing; `password` is refused: set a new one instead).
        public var deleteProviders: [String] = []
        public init() {}
    }

    /// Applies `changes` to `uid`. A new email or password links an anonymous account
    /// (keeping its uid) and revokes every earlier token; a new session is returned then.
    public func update(uid: String, _ changes: Changes) throws(AuthError) -> (UserRecord, Session?) {
        let now = clock()
        let (user, credentialsChanged) = try apply(changes, to: uid, now: now)
        guard credentialsChanged, !user.disabled else { return (user, nil) }
        return (user, try startSession(for: user, now: now))
    }

    /// Applies `changes` and stores the user; no session is started. Returns the user and
    /// whether the email or password changed.
    ///
    /// A new password or disabling revokes earlier tokens: refresh tokens revoked, and
    /// `validSince` one second ahead (so ID tokens from the revoking second itself are
    /// refused, as `revokeSessions` does). A requested `validSince` (the Admin SDK's
    /// `revoke_refresh_tokens` sends the current second by its own clock) revokes the same
    /// way whichever clock it came from: every ID token issued at or before the
    /// revocation is refused afterwards, even when the caller's clock is behind ours.
    func apply(_ changes: Changes, to uid: String, now: Int64) throws(AuthError) -> (UserRecord, Bool) {
        guard var user = try wrap({ try accounts.user(uid: uid) }) else { throw .userNotFound }
        let nowSeconds = now / 1000
        var credentialsChanged = false
        if let email = changes.email {
            let valid = try validate(email: email)
            // A new address is unproven until a code mailed to it is used (an account
            // must not carry someone else's address as verified).
            if valid != user.email { user.email = valid; user.emailVerified = false; credentialsChanged = true }
        }
        if let password = changes.password {
            _ = try validate(password: password)
            user.passwordHash = try hash(password)
            user.passwordUpdatedAt = now
            credentialsChanged = true
        }
        if changes.deleteProviders.contains("password") {
            throw AuthError("OPERATION_NOT_ALLOWED", detail: "Hearth cannot unlink provider password")
        }
        user.providerLinks.removeAll { changes.deleteProviders.contains($0.providerID) }
        if user.email != nil && user.passwordHash != nil { user.provider = .password }
        if changes.deleteDisplayName { user.displayName = nil } else if let name = changes.displayName { user.displayName = name }
        if changes.deletePhotoURL { user.photoURL = nil } else if let url = changes.photoURL { user.photoURL = url }
        if let disabled = changes.disabled { user.disabled = disabled }
        if let verified = changes.emailVerified { user.emailVerified = verified }
        if let claims = changes.customClaims {
            user.customClaims = claims.isEmpty ? nil : JSONWriter.string(.object(claims))
        }
        var revoke = changes.password != nil || changes.disabled == true
        if let requested = changes.validSince {
            guard requested >= 0, requested <= nowSeconds + Self.maxValidSinceAhead else {
                throw AuthError("INVALID_ARGUMENT", detail: "validSince must be seconds since the epoch, at most \(Self.maxValidSinceAhead) s ahead")
            }
            // A revocation (firebase-admin's revoke_refresh_tokens sends its own clock's
            // second): whatever that clock says, every token issued so far is refused.
            user.validSince = max(requested, Self.validSinceRevoking(user.validSince, nowSeconds: nowSeconds))
            revoke = true
        }
        if revoke { user.validSince = max(user.validSince, Self.validSinceRevoking(user.validSince, nowSeconds: nowSeconds)) }
        do {
            try accounts.update(user)
        } catch AccountStoreError.duplicateEmail {
            throw .emailExists
        } catch {
            throw .unexpected(error)
        }
        if revoke { try wrap { try accounts.revokeRefreshTokens(uid: uid) } }
        return (user, credentialsChanged)
    }

    /// How far ahead of now an admin may set `validSince`, seconds: ID tokens are never
    /// issued before `validSince`, and ones issued further ahead than the verifier's leeway
    /// would be refused as from the future.
    public static let maxValidSinceAhead = TokenVerifier.defaultLeeway

    /// The `validSince` that refuses every ID token issued so far. Tokens are issued at
    /// `max(now, validSince)`, so after an earlier revocation in this same second some carry
    /// `iat == validSince`, one second ahead: the new bound must pass those too, not just
    /// the current second. Never more than `maxValidSinceAhead` ahead.
    static func validSinceRevoking(_ current: Int64, nowSeconds: Int64) -> Int64 {
        min(max(current, nowSeconds) + 1, nowSeconds + maxValidSinceAhead)
    }

    public func delete(uid: String) throws(AuthError) {
        guard try wrap({ try accounts.delete(uid: uid) }) else { throw .userNotFound }
    }

    /// Signs `uid` out everywhere: refresh tokens revoked, earlier ID tokens refused.
    public func revokeSessions(uid: String) throws(AuthError) {
        guard var user = try wrap({ try accounts.user(uid: uid) }) else { throw .userNotFound }
        user.validSince = Self.validSinceRevoking(user.validSince, nowSeconds: clock() / 1000)
        try wrap { try accounts.update(user) }
        try wrap { try accounts.revokeRefreshTokens(uid: uid) }
    }

    // MARK: Helpers

    func validate(email: String?, password: String?) throws(AuthError) -> (String, String) {
        guard let email, !email.isEmpty else { throw .missingEmail }
        guard let password, !password.isEmpty else { throw .missingPassword }
        return (try validate(email: email), try validate(password: password))
    }

    /// The email lowercased, or `INVALID_EMAIL`.
    func validate(email: String) throws(AuthError) -> String {
        guard let normalized = Credentials.normalizedEmail(email) else { throw .invalidEmail }
        return normalized
    }


    /// The password if long enough and not too long.
    func validate(password: String) throws(AuthError) -> String {
        guard password.count >= settings.minimumPasswordLength else { throw .weakPassword(minimum: settings.minimumPasswordLength) }
        guard password.utf8.count <= AuthSettings.maximumPasswordLength else { throw AuthError("INVALID_PASSWORD", detail: "too long") }
        return password
    }

    func hash(_ password: String) throws(AuthError) -> String {
        do { return try hasher.hash(password) } catch { throw .internalError }
    }

    /// Runs a store call, its failures as `AuthError` (`unexpected`: a full disk, else internal).
    public func wrap<T>(_ body: () throws -> T) throws(AuthError) -> T {
        do { return try body() } catch let error as AuthError { throw error } catch { throw .unexpected(error) }
    }
}
