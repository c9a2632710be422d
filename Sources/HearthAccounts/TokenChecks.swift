import Dispatch
import HearthAuth
import HearthJSON
import HearthStore
import Synchronization

/// The account core's side of authenticating a request (docs/design.md §6): whether an ID
/// token is good and whose it is, and later whether the identity it gave still stands.
/// Transport-neutral: HearthServer's `Authenticator` reads the credential off a request,
/// runs the blocking checks off the I/O queue, and answers REST with 401 and the wire
/// protocol with `expired_token` / `invalid_token`.
public final class TokenChecks: Sendable {
    public let service: AccountService
    /// Tokens whose signature was already checked, by their exact text, with their expiry:
    /// an Ed25519 verification costs tens of microseconds, a lookup well under one.
    private let verified = Mutex<[String: VerifiedToken]>([:])
    /// Users whose status is cached, with when it was read (s).
    private let statusCache = Mutex<[String: (validSince: Int64, disabled: Bool, fetched: Int64)]>([:])
    /// Past either cap its cache starts over: memory stays bounded, and the cost is one
    /// re-verification per token.
    let maxVerifiedTokens: Int
    let maxCachedUsers: Int
    /// Whether the emulator suite's fixed admin token (`Bearer owner`) is honoured.
    let acceptEmulatorOwner: Bool
    /// The fixed token the Firebase emulator suite's admin clients send (`Bearer owner`,
    /// docs/protocol/admin-client.md §1); honoured only when `acceptEmulatorOwner` is on.
    public static let emulatorOwnerToken = "owner"

    public init(service: AccountService, maxVerifiedTokens: Int, maxCachedUsers: Int, acceptEmulatorOwner: Bool) {
        self.service = service
        self.maxVerifiedTokens = maxVerifiedTokens
        self.maxCachedUsers = maxCachedUsers
        self.acceptEmulatorOwner = acceptEmulatorOwner
    }

    /// Entries in the two caches (for tests and metrics).
    public var cacheSizes: (tokens: Int, users: Int) {
        (verified.withLock { $0.count }, statusCache.withLock { $0.count })
    }

    /// Why a token was refused, for every transport: REST answers 401 (503 when the
    /// accounts could not be read), the wire protocol `expired_token` or `invalid_token`.
    public enum CredentialError: Error, Equatable {
        case expired
        case invalid
        /// Its user was deleted or disabled, or revoked its tokens since it was issued.
        case revoked
        /// The user's status could not be read.
        case unavailable

        /// The text the client gets.
        public var message: String {
            switch self {
            case .expired: "Auth token is expired"
            case .invalid: "Invalid auth token"
            case .revoked: "Auth token is revoked"
            case .unavailable: "Service unavailable; the request was not attempted"
            }
        }
    }

    /// Whose a good token is: the rules' `auth` (docs/protocol/rules.md §3.3:
    /// `{uid, provider, token}`), whether it is an operator's, and what a long-lived stream
    /// must re-check later.
    public struct Identity: Sendable {
        public var auth: JSONValue
        public var isAdmin: Bool
        /// The user and the token's issue time (s), for revocation checks; nil for admins.
        public var uid: String?
        public var issuedAt: Int64?
        /// The token's expiry, ms since the epoch; nil when it has none (emulator owner).
        public var expiresAt: Int64?
    }

    /// The identity `token` gives, or why it gives none. With `cacheOnly` it answers only
    /// from the caches (no signature check, no database read): nil when it would have to
    /// look further. Otherwise blocking, and never nil.
    public func identity(token: String, cacheOnly: Bool) throws(CredentialError) -> Identity? {
        try identity(token: token, cacheOnly: cacheOnly, fetchKeys: true)
    }

    /// The identity `token` gives, decided off the caches (may block on a signature check
    /// or a user's row, as `identity(token:cacheOnly: false)`), except that a token needing
    /// a Firebase project's keys fetched holds no thread while they are: it waits for the
    /// fetch as a callback (`IdentityProviders.whenKeysFetched`, bounded per provider) and is
    /// decided on `queue` when it ends. So a key URL that never answers delays only the
    /// tokens that need it. `done` is called once.
    public func identity(token: String, resumeOn queue: DispatchQueue,
                         _ done: @escaping @Sendable (Result<Identity, CredentialError>) -> Void) {
        let decide: @Sendable () -> Void = { [self] in
            do throws(CredentialError) {
                done(.success(try identity(token: token, cacheOnly: false, fetchKeys: false)!))
            } catch {
                done(.failure(error))
            }
        }
        guard let providers = service.identityProviders, needsProviderKeys(token, providers) else { return decide() }
        providers.whenKeysFetched(for: token, provider: IdentityProvider.firebase) { queue.async(execute: decide) }
    }

    /// Whether `token` is not Hearth's own (good or expired) and names a key the Firebase
    /// project's keys lack: only then could checking it fetch keys.
    private func needsProviderKeys(_ token: String, _ providers: IdentityProviders) -> Bool {
        guard providers.needsKeyFetch(token, provider: IdentityProvider.firebase), verified.withLock({ $0[token] }) == nil else { return false }
        do {
            _ = try service.verify(token)
            return false
        } catch .tokenExpired {
            return false
        } catch {
            return true
        }
    }

    /// `fetchKeys` false: a Firebase project's token naming an unknown key is refused
    /// without fetching (its keys were fetched just before, or may not be now).
    private func identity(token: String, cacheOnly: Bool, fetchKeys: Bool) throws(CredentialError) -> Identity? {
        if acceptEmulatorOwner && ConstantTime.equals(Array(token.utf8), Array(Self.emulatorOwnerToken.utf8)) {
            return Identity(auth: .null, isAdmin: true)
        }
        // The SDKs' unsigned mock tokens: users in emulator mode only, never
        // expired (they carry `exp: 3600`), never an operator's, no account behind them.
        if acceptEmulatorOwner, let claims = EmulatorMockToken.claims(token) {
            guard let auth = RulesAuth.value(fromVerifiedClaims: claims) else { throw .invalid }
            return Identity(auth: auth, isAdmin: false)
        }
        guard let verified = try verifiedToken(token, cacheOnly: cacheOnly, fetchKeys: fetchKeys) else { return nil }
        let uid = verified.uid
        if verified.isAdmin {
            return Identity(auth: verified.auth, isAdmin: true, expiresAt: verified.expires * 1000)
        }
        // A Firebase project's user: not an account here; revoking is the issuer's.
        if verified.isExternal { return Identity(auth: verified.auth, isAdmin: false, expiresAt: verified.expires * 1000) }
        guard let status = try userStatus(uid, cacheOnly: cacheOnly) else { return nil }
        guard !status.disabled, verified.issuedAt >= status.validSince else { throw .revoked }
        return Identity(auth: verified.auth, isAdmin: false, uid: uid, issuedAt: verified.issuedAt, expiresAt: verified.expires * 1000)
    }

    /// What became of an identity a connection holds.
    public enum Standing: Equatable, Sendable {
        case good
        /// Its token's `exp` has passed.
        case expired
        /// Its user was deleted, disabled, or revoked its tokens since it was issued.
        case revoked
    }

    /// The standing of an identity now, judged as REST judges a token on every request:
    /// its expiry, then its user's status within `userStatusCacheSeconds`. nil only when
    /// `cacheOnly` and the status would have to be read (then ask again off the I/O queue).
    /// A store failure counts as good: an open stream is not cut because the database was
    /// briefly busy; the next check decides.
    public func standing(expiresAt: Int64?, uid: String?, issuedAt: Int64?, cacheOnly: Bool) -> Standing? {
        if let expiresAt, service.clock() >= expiresAt { return .expired }
        guard let uid, let issuedAt else { return .good }
        return userStanding(uid: uid, issuedAt: issuedAt, cacheOnly: cacheOnly)
    }

    /// Whether a token of `uid` issued at `issuedAt` (s) is still good: the account exists,
    /// is enabled, and was not revoked since (as `standing`, a store failure answers true).
    public func isStillValid(uid: String, issuedAt: Int64) -> Bool {
        userStanding(uid: uid, issuedAt: issuedAt, cacheOnly: false) == .good
    }

    private func userStanding(uid: String, issuedAt: Int64, cacheOnly: Bool) -> Standing? {
        do {
            guard let status = try userStatus(uid, cacheOnly: cacheOnly) else { return nil }
            return !status.disabled && issuedAt >= status.validSince ? .good : .revoked
        } catch {
            return error == .revoked ? .revoked : .good
        }
    }

    /// A verified token's facts, cached by the token's text until it expires: the rules'
    /// `auth` is built once per token, not per request.
    struct VerifiedToken: Sendable {
        let auth: JSONValue
        let uid: String
        let issuedAt: Int64
        let expires: Int64
        let isAdmin: Bool
        /// An ID token of the Firebase project in the providers file (`providerId: firebase`).
        var isExternal = false
    }

    /// The token's facts: from the cache while unexpired, else checked (nil on a miss when
    /// `cacheOnly`).
    private func verifiedToken(_ token: String, cacheOnly: Bool, fetchKeys: Bool) throws(CredentialError) -> VerifiedToken? {
        let now = service.clock() / 1000
        if let hit = verified.withLock({ $0[token] }) {
            guard hit.expires > now else { throw .expired }
            return hit
        }
        if cacheOnly { return nil }
        let claims: JSONValue
        var isExternal = false
        do {
            claims = try service.verify(token)
        } catch .tokenExpired {
            throw .expired
        } catch {
            guard let external = try firebaseProjectClaims(token, fetchKeys: fetchKeys) else { throw .invalid }
            (claims, isExternal) = (.object(external), true)
        }
        guard let members = claims.objectValue, let auth = RulesAuth.value(fromVerifiedClaims: claims),
              let uid = members["sub"]?.stringValue, case .int(let expires)? = members["exp"] else {
            throw .invalid
        }
        let isAdmin = members[OperatorIdentity.claim] == .bool(true) && uid == OperatorIdentity.uid
        var issuedAt: Int64 = 0
        if !isAdmin {
            guard case .int(let iat)? = members["iat"] else { throw .invalid }
            issuedAt = iat
        }
        var facts = VerifiedToken(auth: auth, uid: uid, issuedAt: issuedAt, expires: expires, isAdmin: isAdmin && !isExternal)
        facts.isExternal = isExternal
        verified.withLock { cache in
            if cache.count >= maxVerifiedTokens { cache.removeAll(keepingCapacity: true) }
            cache[token] = facts
        }
        return facts
    }

    /// The claims of an ID token of the configured Firebase project, nil when
    /// none is configured; an expired one is `.expired`, any other failure `.invalid`.
    private func firebaseProjectClaims(_ token: String, fetchKeys: Bool) throws(CredentialError) -> [JSONKey: JSONValue]? {
        guard let providers = service.identityProviders, providers.provider(IdentityProvider.firebase) != nil else { return nil }
        do {
            return try providers.verify(token, provider: IdentityProvider.firebase, fetchKeys: fetchKeys)
        } catch .token(.expired) {
            throw .expired
        } catch {
            throw .invalid
        }
    }

    private func userStatus(_ uid: String, cacheOnly: Bool = false) throws(CredentialError) -> (validSince: Int64, disabled: Bool)? {
        let now = service.clock() / 1000
        if let cached = statusCache.withLock({ $0[uid] }), now - cached.fetched < service.settings.userStatusCacheSeconds {
            return (cached.validSince, cached.disabled)
        }
        if cacheOnly { return nil }
        let user: UserRecord?
        do { user = try service.accounts.user(uid: uid) } catch { throw .unavailable }
        guard let user else { throw .revoked }
        statusCache.withLock { cache in
            if cache.count >= maxCachedUsers { cache.removeAll(keepingCapacity: true) }
            cache[uid] = (user.validSince, user.disabled, now)
        }
        return (user.validSince, user.disabled)
    }

    /// Forget what is cached about `uid` (after this process changed the account).
    public func invalidate(_ uid: String) {
        _ = statusCache.withLock { $0.removeValue(forKey: uid) }
    }
}
