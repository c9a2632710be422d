import Dispatch
import HearthAccounts
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
    public static let adminClaim = OperatorIdentity.claim
    public static let adminUID = OperatorIdentity.uid

    let service: AccountService
    /// Tokens whose signature was already checked, by their exact text, with their expiry:
    /// an Ed25519 verification costs tens of microseconds, a lookup well under one.
    private let verified = Mutex<[String: VerifiedToken]>([:])
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

    /// Why a token was refused, for every transport: REST answers 401 (503 when the
    /// accounts could not be read), the wire protocol `expired_token` or `invalid_token`.
    enum CredentialError: Error, Equatable {
        case expired
        case invalid
        /// Its user was deleted or disabled, or revoked its tokens since it was issued.
        case revoked
        /// The user's status could not be read.
        case unavailable

        /// The text the client gets.
        var message: String {
            switch self {
            case .expired: "Auth token is expired"
            case .invalid: "Invalid auth token"
            case .revoked: "Auth token is revoked"
            case .unavailable: "Service unavailable; the request was not attempted"
            }
        }
    }

    /// Blocking (signature check, maybe a user lookup): call from a work queue.
    func caller(token: String) throws(APIError) -> Caller {
        try credential(token: token).caller
    }

    /// Blocking, like `caller(token:)`.
    func credential(token: String) throws(APIError) -> Credential {
        do {
            // Without cacheOnly the answer is never nil.
            return try credential(token: token, cacheOnly: false)!
        } catch {
            throw error.apiError
        }
    }

    /// Decides `token` for a connection's I/O queue: from the caches (the token verified
    /// before, the user's status fresh) on the calling thread, with no signature check and
    /// no database read; otherwise verified on `work` (it may block), with `done` called on
    /// `replyQueue`, or on `work` when that is nil. REST and the wire protocol both
    /// authenticate this way.
    func decide(token: String, work: DispatchQueue, replyOn replyQueue: DispatchQueue? = nil,
                _ done: @escaping @Sendable (Result<Credential, CredentialError>) -> Void) {
        do {
            if let credential = try credential(token: token, cacheOnly: true) { return done(.success(credential)) }
        } catch {
            return done(.failure(error))
        }
        work.async {
            let result: Result<Credential, CredentialError>
            do throws(CredentialError) {
                result = .success(try self.credential(token: token, cacheOnly: false)!)
            } catch {
                result = .failure(error)
            }
            if let replyQueue { replyQueue.async { done(result) } } else { done(result) }
        }
    }

    private func credential(token: String, cacheOnly: Bool) throws(CredentialError) -> Credential? {
        if acceptEmulatorOwner && ConstantTime.equals(Array(token.utf8), Array(Self.emulatorOwnerToken.utf8)) {
            return Credential(caller: Caller(auth: .null, isAdmin: true))
        }
        guard let verified = try verifiedToken(token, cacheOnly: cacheOnly) else { return nil }
        let uid = verified.uid
        if verified.isAdmin {
            return Credential(caller: Caller(auth: verified.auth, isAdmin: true), expiresAt: verified.expires * 1000)
        }
        guard let status = try userStatus(uid, cacheOnly: cacheOnly) else { return nil }
        guard !status.disabled, verified.issuedAt >= status.validSince else { throw .revoked }
        return Credential(caller: Caller(auth: verified.auth), uid: uid, issuedAt: verified.issuedAt, expiresAt: verified.expires * 1000)
    }

    /// Whether a token of `uid` issued at `issuedAt` (s) is still good: the account exists,
    /// is enabled, and was not revoked since (user status cached up to
    /// `userStatusCacheSeconds`). A store failure answers true: an open stream is not cut
    /// because the database was briefly busy; the next check decides.
    func isStillValid(uid: String, issuedAt: Int64) -> Bool {
        userStanding(uid: uid, issuedAt: issuedAt, cacheOnly: false) == .good
    }

    /// What became of an identity a connection holds (issue 25).
    enum Standing: Equatable {
        case good
        /// Its token's `exp` has passed.
        case expired
        /// Its user was deleted, disabled, or revoked its tokens since it was issued.
        case revoked
    }

    /// The standing of `credential` now, judged as REST judges a token on every request:
    /// its expiry, then its user's status within `userStatusCacheSeconds`. nil only when
    /// `cacheOnly` and the status would have to be read (then ask again off the I/O queue).
    /// A store failure counts as good, as in `isStillValid`.
    func standing(of credential: Credential, cacheOnly: Bool) -> Standing? {
        if let expiresAt = credential.expiresAt, service.clock() >= expiresAt { return .expired }
        guard let uid = credential.uid, let issuedAt = credential.issuedAt else { return .good }
        return userStanding(uid: uid, issuedAt: issuedAt, cacheOnly: cacheOnly)
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
    }

    /// The token's facts: from the cache while unexpired, else checked (nil on a miss when
    /// `cacheOnly`).
    private func verifiedToken(_ token: String, cacheOnly: Bool) throws(CredentialError) -> VerifiedToken? {
        let now = service.clock() / 1000
        if let hit = verified.withLock({ $0[token] }) {
            guard hit.expires > now else { throw .expired }
            return hit
        }
        if cacheOnly { return nil }
        let claims: JSONValue
        do {
            claims = try service.verify(token)
        } catch {
            throw error == .tokenExpired ? .expired : .invalid
        }
        guard let members = claims.objectValue, let auth = RulesAuth.value(fromVerifiedClaims: claims),
              let uid = members["sub"]?.stringValue, case .int(let expires)? = members["exp"] else {
            throw .invalid
        }
        let isAdmin = members[Self.adminClaim] == .bool(true) && uid == Self.adminUID
        var issuedAt: Int64 = 0
        if !isAdmin {
            guard case .int(let iat)? = members["iat"] else { throw .invalid }
            issuedAt = iat
        }
        let facts = VerifiedToken(auth: auth, uid: uid, issuedAt: issuedAt, expires: expires, isAdmin: isAdmin)
        verified.withLock { cache in
            if cache.count >= maxVerifiedTokens { cache.removeAll(keepingCapacity: true) }
            cache[token] = facts
        }
        return facts
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
    func invalidate(_ uid: String) {
        _ = statusCache.withLock { $0.removeValue(forKey: uid) }
    }
}

extension Authenticator.CredentialError {
    /// The REST answer (the HTTP boundary).
    var apiError: APIError {
        self == .unavailable ? .unavailable : APIError(401, message)
    }
}
