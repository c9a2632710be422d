import HearthAuth
import HearthHTTP
import HearthJSON
import HearthStore
import Synchronization

/// Turns a request's credential (`Authorization: Bearer <idToken>` or `?auth=<idToken>`)
/// into the rules' `auth` (spec §3.3: `{uid, provider, token}`), or refuses it with 401.
/// Admin tokens (`hearth token --admin`) make a caller that bypasses the rules.
public final class Authenticator: Sendable {
    /// The custom claim that marks an operator's token (minted only by the CLI).
    public static let adminClaim = "hearth_admin"
    public static let adminUID = "hearth-admin"

    let service: AccountService
    /// Tokens whose signature was already checked, by their exact text, with their expiry:
    /// an Ed25519 verification costs tens of microseconds, a lookup well under one.
    private let verified = Mutex<[String: (claims: JSONValue, expires: Int64)]>([:])
    public static let defaultMaxVerifiedTokens = 20_000
    /// Users whose status is cached at most by default. Past either cap the cache starts
    /// over: memory stays bounded, and the cost is one re-verification per token.
    public static let defaultMaxCachedUsers = 50_000
    let maxVerifiedTokens: Int
    let maxCachedUsers: Int
    private let statusCache = Mutex<[String: (validSince: Int64, disabled: Bool, fetched: Int64)]>([:])

    /// The fixed token the Firebase emulator suite's admin clients send (`Bearer owner`,
    /// firebase-admin-wire §1); honoured only when `acceptEmulatorOwner` is on.
    public static let emulatorOwnerToken = "owner"
    let acceptEmulatorOwner: Bool

    public init(service: AccountService, maxVerifiedTokens: Int = defaultMaxVerifiedTokens,
                maxCachedUsers: Int = defaultMaxCachedUsers, acceptEmulatorOwner: Bool = false) {
        self.service = service
        self.acceptEmulatorOwner = acceptEmulatorOwner
        self.maxVerifiedTokens = maxVerifiedTokens
        self.maxCachedUsers = maxCachedUsers
    }

    /// Entries in the two caches (for tests and metrics).
    var cacheSizes: (tokens: Int, users: Int) {
        (verified.withLock { $0.count }, statusCache.withLock { $0.count })
    }

    /// The credential a request carries, if any.
    static func credential(of request: HTTPRequest, options: QueryOptions) -> String? {
        if let header = request.headers["Authorization"] {
            let parts = header.split(separator: " ", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == "bearer" { return String(parts[1].drop { $0 == " " }) }
            return header  // an unusable scheme: verification fails with 401
        }
        return options.credential
    }

    /// A verified credential and what a long-lived stream must re-check about it later.
    struct Credential: Sendable {
        var caller: Caller
        /// The user and the token's issue time (s), for revocation checks; nil for admins.
        var uid: String?
        var issuedAt: Int64?
        /// The token's expiry, ms since the epoch; nil when it has none (emulator owner).
        var expiresAt: Int64?
    }

    /// Blocking (signature check, maybe a user lookup): call from a work queue.
    func caller(token: String) throws(APIError) -> Caller {
        try credential(token: token).caller
    }

    /// Blocking, like `caller(token:)`.
    func credential(token: String) throws(APIError) -> Credential {
        if acceptEmulatorOwner && ConstantTime.equals(Array(token.utf8), Array(Self.emulatorOwnerToken.utf8)) {
            return Credential(caller: Caller(auth: .null, isAdmin: true))
        }
        let claims = try verifiedClaims(token)
        guard let members = claims.objectValue, let auth = RulesAuth.value(fromVerifiedClaims: claims),
              let uid = members["sub"]?.stringValue else { throw APIError(401, "Invalid auth token") }
        var expiresAt: Int64?
        if case .int(let exp)? = members["exp"] { expiresAt = exp * 1000 }
        if members[Self.adminClaim] == .bool(true) && uid == Self.adminUID {
            return Credential(caller: Caller(auth: auth, isAdmin: true), expiresAt: expiresAt)
        }
        guard case .int(let iat)? = members["iat"] else { throw APIError(401, "Invalid auth token") }
        let status = try userStatus(uid)
        guard !status.disabled, iat >= status.validSince else { throw APIError(401, "Auth token is revoked") }
        return Credential(caller: Caller(auth: auth), uid: uid, issuedAt: iat, expiresAt: expiresAt)
    }

    /// Whether a token of `uid` issued at `issuedAt` (s) is still good: the account exists,
    /// is enabled, and was not revoked since (user status cached up to
    /// `userStatusCacheSeconds`). A store failure answers true: an open stream is not cut
    /// because the database was briefly busy; the next check decides.
    func isStillValid(uid: String, issuedAt: Int64) -> Bool {
        do {
            let status = try userStatus(uid)
            return !status.disabled && issuedAt >= status.validSince
        } catch {
            return error != APIError(401, "Auth token is revoked")
        }
    }

    /// The token's claims: from the cache of verified tokens while unexpired, else checked.
    private func verifiedClaims(_ token: String) throws(APIError) -> JSONValue {
        let now = service.clock() / 1000
        if let hit = verified.withLock({ $0[token] }) {
            guard hit.expires > now else { throw APIError(401, "Auth token is expired") }
            return hit.claims
        }
        let claims: JSONValue
        do {
            claims = try service.verify(token)
        } catch {
            throw error == .tokenExpired ? APIError(401, "Auth token is expired") : APIError(401, "Invalid auth token")
        }
        if case .int(let expires)? = claims.objectValue?["exp"] {
            verified.withLock { cache in
                if cache.count >= maxVerifiedTokens { cache.removeAll(keepingCapacity: true) }
                cache[token] = (claims, expires)
            }
        }
        return claims
    }

    private func userStatus(_ uid: String) throws(APIError) -> (validSince: Int64, disabled: Bool) {
        let now = service.clock() / 1000
        if let cached = statusCache.withLock({ $0[uid] }), now - cached.fetched < service.settings.userStatusCacheSeconds {
            return (cached.validSince, cached.disabled)
        }
        let user: UserRecord?
        do { user = try service.accounts.user(uid: uid) } catch { throw APIError.unavailable }
        guard let user else { throw APIError(401, "Auth token is revoked") }
        statusCache.withLock { cache in
            if cache.count >= maxCachedUsers { cache.removeAll(keepingCapacity: true) }
            cache[uid] = (user.validSince, user.disabled, now)
        }
        return (user.validSince, user.disabled)
    }

    /// Forget what is cached about `uid` (after this process changed the account).
    func invalidate(_ uid: String) {
        _ = statusCache.withLock { $0.removeValue(forKey: uid) }
    }
}
