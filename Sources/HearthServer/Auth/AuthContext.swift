import Dispatch
import HearthAuth
import HearthHTTP
import HearthJSON
import HearthStore

/// What the account endpoints share, built by the composition root.
struct AuthContext: Sendable {
    let service: AccountService
    let authenticator: Authenticator
    /// Bounded pool for scrypt (each hash takes ~32 MiB): a burst of sign-ins queues here
    /// instead of exhausting memory, and is refused with 429 past the backlog.
    let pool: HashingPool
    /// Non-hashing account work (SQLite lookups, token signing), off the I/O queues.
    let work: DispatchQueue
    let perAddress: RateLimiter
    let perAccount: RateLimiter

    /// Hashing jobs running at once; each scrypt hash takes ~32 MiB and one core.
    static let hashingPoolWidth = 2
    /// Hashing jobs waiting at most; past it sign-ins get 429 at once.
    static let hashingBacklog = 256

    /// The account machinery over `store`, with signing keys in `<dataDirectory>/keys`.
    static func make(store: SQLiteTreeStore, dataDirectory: String, settings: AuthSettings,
                     hasher: PasswordHasher = PasswordHasher(),
                     clock: @escaping @Sendable () -> Int64 = SQLiteTreeStore.systemMilliseconds) throws -> AuthContext {
        let service = AccountService(accounts: store.accounts, keys: try KeyRing(dataDirectory: dataDirectory),
                                     settings: settings, hasher: hasher, clock: clock)
        let seconds: @Sendable () -> Int64 = { clock() / 1000 }
        return AuthContext(
            service: service, authenticator: Authenticator(service: service, acceptEmulatorOwner: settings.acceptEmulatorOwner),
            pool: HashingPool(width: hashingPoolWidth, maxBacklog: hashingBacklog),
            work: DispatchQueue(label: "hearth.auth.work", attributes: .concurrent),
            perAddress: RateLimiter(limit: settings.signInAttemptsPerMinute, clock: seconds),
            perAccount: RateLimiter(limit: settings.signInAttemptsPerMinute, clock: seconds))
    }

    /// 429 with `Retry-After` when the address or the account made too many attempts.
    func limitSignIn(address: String, account: String?) -> AuthError? {
        if let wait = perAddress.attempt("addr:" + address) { return AuthError.tooManyAttempts.withRetry(wait) }
        if let account, let wait = perAccount.attempt("acct:" + account.lowercased()) { return AuthError.tooManyAttempts.withRetry(wait) }
        return nil
    }

    /// `GET /.well-known/jwks.json`: the public keys that verify ID tokens.
    func jwks() -> HTTPResponse {
        var response = JSONResponse.make(JWKS.document(Array(service.keys.verifyingKeys.values)), options: .defaults, render: false)
        response.headers.add("Cache-Control", "public, max-age=300")
        return response
    }
}
