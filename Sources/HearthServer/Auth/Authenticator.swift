import Dispatch
import HearthAccounts
import HearthDatabase
import HearthHTTP
import HearthJSON

/// Turns a request's credential (`Authorization: Bearer <idToken>` or `?auth=<idToken>`)
/// into the rules' `auth` (docs/protocol/rules.md §3.3: `{uid, provider, token}`), or
/// refuses it with 401. Admin tokens (`hearth token --admin`) make a caller that bypasses
/// the rules. The HTTP and queue side over the account core's `TokenChecks`, which decides
/// tokens.
public final class Authenticator: Sendable {
    /// The custom claim that marks an operator's token (minted only by the CLI).
    public static let adminClaim = OperatorIdentity.claim
    static let adminUID = OperatorIdentity.uid
    public static let defaultMaxVerifiedTokens = 20_000
    /// Users whose status is cached at most by default. Past either cap the cache starts
    /// over: memory stays bounded, and the cost is one re-verification per token.
    public static let defaultMaxCachedUsers = 50_000
    public static let emulatorOwnerToken = TokenChecks.emulatorOwnerToken
    let checks: TokenChecks
    /// Emulator mode (`--accept-emulator-owner`): the `owner` token and unsigned tokens are
    /// honoured (from this machine only, `LocalOnlyCredentials`).
    let acceptEmulatorOwner: Bool
    var service: AccountService { checks.service }

    public init(service: AccountService, maxVerifiedTokens: Int = defaultMaxVerifiedTokens,
                maxCachedUsers: Int = defaultMaxCachedUsers, acceptEmulatorOwner: Bool = false) {
        self.acceptEmulatorOwner = acceptEmulatorOwner
        checks = TokenChecks(service: service, maxVerifiedTokens: maxVerifiedTokens, maxCachedUsers: maxCachedUsers,
                             acceptEmulatorOwner: acceptEmulatorOwner)
    }

    /// Entries in the two caches (for tests and metrics).
    var cacheSizes: (tokens: Int, users: Int) { checks.cacheSizes }

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

    typealias CredentialError = TokenChecks.CredentialError
    typealias Standing = TokenChecks.Standing

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
    /// `replyQueue`, or on `work` when that is nil. A token that needs an identity
    /// provider's keys fetched waits for them without holding a thread of `work`
    /// (`TokenChecks.identity(token:resumeOn:_:)`), so other tokens are decided meanwhile.
    /// REST and the wire protocol both authenticate this way.
    func decide(token: String, work: DispatchQueue, replyOn replyQueue: DispatchQueue? = nil,
                _ done: @escaping @Sendable (Result<Credential, CredentialError>) -> Void) {
        do {
            if let credential = try credential(token: token, cacheOnly: true) { return done(.success(credential)) }
        } catch {
            return done(.failure(error))
        }
        work.async {
            self.checks.identity(token: token, resumeOn: work) { identity in
                let result = identity.map(Self.credential)
                if let replyQueue { replyQueue.async { done(result) } } else { done(result) }
            }
        }
    }

    private func credential(token: String, cacheOnly: Bool) throws(CredentialError) -> Credential? {
        try checks.identity(token: token, cacheOnly: cacheOnly).map(Self.credential)
    }

    private static func credential(_ identity: TokenChecks.Identity) -> Credential {
        Credential(caller: Caller(auth: identity.auth, isAdmin: identity.isAdmin), uid: identity.uid, issuedAt: identity.issuedAt,
                   expiresAt: identity.expiresAt)
    }

    /// Whether a token of `uid` issued at `issuedAt` (s) is still good: the account exists,
    /// is enabled, and was not revoked since (user status cached up to
    /// `userStatusCacheSeconds`). A store failure answers true: an open stream is not cut
    /// because the database was briefly busy; the next check decides.
    func isStillValid(uid: String, issuedAt: Int64) -> Bool {
        checks.isStillValid(uid: uid, issuedAt: issuedAt)
    }

    /// The standing of `credential` now, judged as REST judges a token on every request
    /// (`TokenChecks.standing`). nil only when `cacheOnly` and the status would have to be
    /// read (then ask again off the I/O queue).
    func standing(of credential: Credential, cacheOnly: Bool) -> Standing? {
        checks.standing(expiresAt: credential.expiresAt, uid: credential.uid, issuedAt: credential.issuedAt, cacheOnly: cacheOnly)
    }

    /// Forget what is cached about `uid` (after this process changed the account).
    func invalidate(_ uid: String) {
        checks.invalidate(uid)
    }
}

extension Authenticator.CredentialError {
    /// The REST answer (the HTTP boundary).
    var apiError: APIError {
        self == .unavailable ? .unavailable : APIError(401, message)
    }
}
