import HearthAuth
import HearthJSON
import HearthStore

/// What the Admin SDKs' user management needs (`projects/P/accounts…`,
/// docs/protocol/admin-client.md §7): creating users with chosen fields, looking up and
/// listing any user, and admin updates that start no session. Blocking, like the rest of
/// `AccountService`.
extension AccountService {
    /// A user as an admin creates it (`create_user`). With both an email and a password it
    /// is a password user; otherwise it has no provider and cannot sign in (Firebase's
    /// anonymous users are the same: no provider linked).
    public struct NewUser: Sendable {
        public var uid: String?
        public var email: String?
        public var password: String?
        public var displayName: String?
        public var photoURL: String?
        public var emailVerified = false
        public var disabled = false
        public init() {}
    }

    /// Uids an admin may not give a user: the subject of `hearth token --admin` tokens.
    public static let reservedUIDs: Set<String> = [OperatorIdentity.uid]

    public func createUser(_ new: NewUser) throws(AuthError) -> UserRecord {
        let uid: String
        if let given = new.uid {
            guard (1...TokenVerifier.maxSubjectLength).contains(given.utf16.count),
                  !given.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
                throw AuthError("INVALID_LOCAL_ID", detail: "a uid is 1 to \(TokenVerifier.maxSubjectLength) characters, no control characters")
            }
            guard !Self.reservedUIDs.contains(given) else { throw AuthError("INVALID_LOCAL_ID", detail: "\(given) is reserved") }
            uid = given
        } else {
            uid = try wrap { try Self.newUID() }
        }
        var email: String?
        if let given = new.email { email = try validate(email: given) }
        var passwordHash: String?
        if let password = new.password { passwordHash = try hash(try validate(password: password)) }
        let now = clock()
        var user = UserRecord(uid: uid, email: email, passwordHash: passwordHash,
                              provider: email != nil && passwordHash != nil ? .password : .anonymous,
                              createdAt: now, validSince: now / 1000)
        user.displayName = new.displayName
        user.photoURL = new.photoURL
        user.emailVerified = new.emailVerified
        user.disabled = new.disabled
        if passwordHash != nil { user.passwordUpdatedAt = now }
        do {
            try accounts.insert(user)
        } catch AccountStoreError.duplicateEmail {
            throw .emailExists
        } catch AccountStoreError.duplicateUID {
            throw AuthError("DUPLICATE_LOCAL_ID")
        } catch {
            throw .unexpected(error)
        }
        return user
    }

    /// Applies `changes` as an admin: no session is started (see `apply` for revocation).
    public func updateAsAdmin(uid: String, _ changes: Changes) throws(AuthError) -> UserRecord {
        try apply(changes, to: uid, now: clock()).0
    }

    /// The users with any of these uids or emails, in the order asked, each once.
    public func users(uids: [String], emails: [String], federated: [(providerID: String, rawID: String)] = []) throws(AuthError) -> [UserRecord] {
        var found: [UserRecord] = []
        var seen: Set<String> = []
        for uid in uids {
            if let user = try wrap({ try accounts.user(uid: uid) }), seen.insert(user.uid).inserted { found.append(user) }
        }
        for email in emails {
            if let user = try wrap({ try accounts.user(email: email.lowercased()) }), seen.insert(user.uid).inserted { found.append(user) }
        }
        for (providerID, rawID) in federated {
            if let user = try wrap({ try accounts.user(providerID: providerID, rawID: rawID) }), seen.insert(user.uid).inserted { found.append(user) }
        }
        return found
    }

    /// Up to `limit` users after `afterUID` in uid order, and the uid to continue after
    /// when there are more.
    public func listUsers(after afterUID: String?, limit: Int) throws(AuthError) -> (users: [UserRecord], next: String?) {
        var users = try wrap { try accounts.users(after: afterUID, limit: limit + 1) }
        guard users.count > limit else { return (users, nil) }
        users.removeLast(users.count - limit)
        return (users, users.last?.uid)
    }
}
