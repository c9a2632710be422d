import HearthAuth
import HearthStore

/// The admin console's administrators and their sessions: accounts of
/// their own (not app users), passwords hashed as users' are, sessions as cookies whose
/// token is stored only as a hash, each with a CSRF token, an idle and an absolute expiry.
/// Every method blocks (the store, scrypt): call from a work queue or the hashing pool.
public struct ConsoleAccounts: Sendable {
    /// A session unused this long ends (`consoleIdleSeconds`).
    public static let defaultIdleSeconds: Int64 = 30 * 60
    /// The shortest idle time an operator may set.
    public static let minimumIdleSeconds: Int64 = 2
    /// A session ends this long after sign-in, used or not.
    public static let absoluteSeconds: Int64 = 12 * 3600
    /// `seen_at` is written at most this often (a write per request would cost a commit),
    /// and at least four times per idle period.
    public static let touchEverySeconds: Int64 = 60

    public let store: any ConsoleRecords
    public let hasher: PasswordHasher
    /// Milliseconds since the epoch.
    public let clock: @Sendable () -> Int64
    public let minimumPasswordLength: Int
    public let idleSeconds: Int64

    /// The shortest administrator password.
    public static let defaultMinimumPasswordLength = 10

    public init(store: any ConsoleRecords, hasher: PasswordHasher, minimumPasswordLength: Int = defaultMinimumPasswordLength,
                idleSeconds: Int64 = defaultIdleSeconds,
                clock: @escaping @Sendable () -> Int64) {
        self.idleSeconds = max(idleSeconds, Self.minimumIdleSeconds)
        self.store = store
        self.hasher = hasher
        self.minimumPasswordLength = minimumPasswordLength
        self.clock = clock
    }

    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        case invalidEmail
        case weakPassword(Int)
        case exists
        case notFound
        case wrongCredentials
        case storage(String)

        public var description: String {
            switch self {
            case .invalidEmail: return "not an email address"
            case .weakPassword(let minimum): return "an administrator's password needs at least \(minimum) characters"
            case .exists: return "an administrator with this email exists"
            case .notFound: return "no administrator with this email"
            case .wrongCredentials: return "wrong email or password"
            case .storage(let why): return why
            }
        }
    }

    /// A signed-in console session: the cookie's token and the CSRF token.
    public struct Session: Sendable, Equatable {
        public var token: String
        public var csrf: String
        public var email: String
        /// When it began, ms.
        public var createdAt: Int64
    }

    static func normalized(_ email: String) throws(Failure) -> String {
        guard let normalized = Credentials.normalizedEmail(email) else { throw .invalidEmail }
        return normalized
    }

    func wrap<T>(_ body: () throws -> T) throws(Failure) -> T {
        do {
            return try body()
        } catch let failure as Failure {
            throw failure
        } catch ConsoleStore.Failure.exists {
            throw .exists
        } catch ConsoleStore.Failure.notFound {
            throw .notFound
        } catch {
            throw .storage("\(error)")
        }
    }

    // MARK: Administrators

    public func add(email: String, password: String) throws(Failure) {
        let email = try Self.normalized(email)
        guard password.count >= minimumPasswordLength else { throw .weakPassword(minimumPasswordLength) }
        let now = clock()
        let hash = try wrap { try hasher.hash(password) }
        try wrap { try store.insert(ConsoleStore.Admin(email: email, passwordHash: hash, createdAt: now, passwordAt: now)) }
    }

    public func setPassword(email: String, password: String) throws(Failure) {
        let email = try Self.normalized(email)
        guard password.count >= minimumPasswordLength else { throw .weakPassword(minimumPasswordLength) }
        let hash = try wrap { try hasher.hash(password) }
        try wrap { try store.setPassword(email: email, hash: hash, at: clock()) }
    }

    public func remove(email: String) throws(Failure) {
        let email = try Self.normalized(email)
        try wrap { try store.remove(email: email) }
    }

    public func list() throws(Failure) -> [ConsoleStore.Admin] {
        try wrap { try store.admins() }
    }

    // MARK: Sessions

    /// Checks the password (the same work for an unknown email) and starts a session.
    public func signIn(email: String, password: String) throws(Failure) -> Session {
        guard let email = try? Self.normalized(email), let admin = try wrap({ try store.admin(email: email) }) else {
            _ = try? hasher.verify(password, against: Credentials.decoyHash)
            throw .wrongCredentials
        }
        guard (try? hasher.verify(password, against: admin.passwordHash)) == true else { throw .wrongCredentials }
        let token = try wrap { try SecretToken.generate() }
        let csrf = try wrap { try SecretToken.generate() }
        let now = clock()
        // Sessions of browsers that never came back are dropped here (an expired one is
        // also dropped when it is presented).
        try wrap { try store.pruneSessions(idleBefore: now - idleSeconds * 1000, createdBefore: now - Self.absoluteSeconds * 1000) }
        try wrap { try store.addSession(ConsoleStore.SessionRecord(hash: SecretToken.hash(token), email: admin.email, csrf: csrf, createdAt: now, seenAt: now)) }
        return Session(token: token, csrf: csrf, email: admin.email, createdAt: now)
    }

    /// The live session of `token`, if any: not idle for `idleSeconds`, not older than
    /// `absoluteSeconds`, its administrator still there. Expired sessions are removed.
    public func session(token: String?) throws(Failure) -> Session? {
        guard let token, SecretToken.isWellFormed(token) else { return nil }
        let hash = SecretToken.hash(token)
        guard let record = try wrap({ try store.session(hash: hash) }) else { return nil }
        let now = clock()
        if now - record.seenAt >= idleSeconds * 1000 || now - record.createdAt >= Self.absoluteSeconds * 1000 {
            try wrap { try store.endSession(hash: hash) }
            return nil
        }
        guard let admin = try wrap({ try store.admin(email: record.email) }), admin.passwordAt <= record.createdAt else {
            try wrap { try store.endSession(hash: hash) }
            return nil
        }
        if now - record.seenAt >= min(Self.touchEverySeconds, max(1, idleSeconds / 4)) * 1000 { try wrap { try store.touchSession(hash: hash, at: now) } }
        return Session(token: token, csrf: record.csrf, email: record.email, createdAt: record.createdAt)
    }

    /// The live session of the first of `tokens` that has one (each looked up by its
    /// hash, as `session(token:)`), if any.
    public func session(tokens: [String]) throws(Failure) -> Session? {
        for token in tokens {
            if let session = try session(token: token) { return session }
        }
        return nil
    }

    public func signOut(token: String?) throws(Failure) {
        guard let token, SecretToken.isWellFormed(token) else { return }
        try wrap { try store.endSession(hash: SecretToken.hash(token)) }
    }
}
