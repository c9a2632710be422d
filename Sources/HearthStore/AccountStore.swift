/// Accounts and refresh tokens (docs/design.md §6), in the same database as the tree.
///
/// Calls block the calling thread until done: call them from a work queue, never from an
/// I/O queue. Writes run on the engine's writer, so they never contend with tree writes
/// for the database's lock.
public protocol AccountStore: Sendable {
    func user(uid: String) throws -> UserRecord?
    func user(email: String) throws -> UserRecord?
    /// The user linked to provider `providerID`'s account `rawID`.
    func user(providerID: String, rawID: String) throws -> UserRecord?
    /// Users ordered by uid, after `afterUID` (for paging), at most `limit`.
    func users(after afterUID: String?, limit: Int) throws -> [UserRecord]
    /// Inserts a new user with its provider links; throws `AccountStoreError.duplicateUID`,
    /// `.duplicateEmail` or `.duplicateProviderLink`.
    func insert(_ user: UserRecord) throws
    /// Replaces a user's row and provider links; throws `.duplicateEmail`,
    /// `.duplicateProviderLink` or `.notFound`.
    func update(_ user: UserRecord) throws
    /// Deletes the user and every refresh token of theirs. False when there was none.
    @discardableResult func delete(uid: String) throws -> Bool

    /// Stores a new refresh token (its hash) starting `family` for `signIn`.
    func addRefreshToken(hash: String, uid: String, family: String, signIn: SignInRecord) throws
    /// Uses the token `rotation.hash`: when current, marks it used and stores `newHash` in
    /// the same family; when already used, revokes the family (a stolen token was
    /// replayed), unless it is a retry within `retryWindow` of a rotation whose successor
    /// is still unused (`RefreshOutcome.retried`).
    func rotateRefreshToken(_ rotation: RefreshRotation) throws -> RefreshOutcome
    /// Revokes every refresh token of `uid` (password change, disable, sign-out).
    func revokeRefreshTokens(uid: String) throws

    /// Refresh-token rows ordered by hash, after `afterHash`, at most `limit`: for copying a
    /// store to another engine (`hearth copy`), so its users stay signed in.
    func refreshTokens(after afterHash: String?, limit: Int) throws -> [RefreshTokenRow]
    /// Inserts copied refresh-token rows as they are.
    func insertRefreshTokens(_ rows: [RefreshTokenRow]) throws

    /// Inserts users in one transaction: all of them or, on any error (including one thrown
    /// by `next`, and `AccountImportError` for a taken uid or email), none. `next` is called
    /// for each user until it returns nil, so a large file is read while it is inserted.
    /// Returns how many were inserted (`hearth users import`).
    func importUsers(_ next: () throws -> UserRecord?) throws -> Int

    /// Stores an email action code (its hash).
    func addActionCode(_ code: ActionCode) throws
    /// The code `hash` of `kind` if it is unused and unexpired at `time`; with `consume`
    /// it is marked used in the same transaction (single use).
    func actionCode(hash: String, kind: String, at time: Int64, consume: Bool) throws -> ActionCodeLookup
}

/// One refresh token's row, every column, as `hearth copy` moves it between engines.
public struct RefreshTokenRow: Sendable, Equatable {
    public var hash: String
    public var uid: String
    public var family: String
    public var createdAt: Int64
    public var usedAt: Int64?
    public var revoked: Bool
    public var signedInAt: Int64?
    public var successorHash: String?
    public var successorSealed: String?
    public var provider: String?
    public var claims: String?

    public init(hash: String, uid: String, family: String, createdAt: Int64, usedAt: Int64?, revoked: Bool, signedInAt: Int64?,
                successorHash: String?, successorSealed: String?, provider: String?, claims: String?) {
        (self.hash, self.uid, self.family, self.createdAt, self.usedAt, self.revoked) = (hash, uid, family, createdAt, usedAt, revoked)
        (self.signedInAt, self.successorHash, self.successorSealed, self.provider, self.claims) = (signedInAt, successorHash, successorSealed, provider, claims)
    }

    /// The columns, in this order, in both engines' tables.
    package static let columns = "hash, uid, family, created_at, used_at, revoked, signed_in_at, successor_hash, successor_sealed, provider, claims"
}

/// An email action code as stored.
public struct ActionCode: Sendable, Equatable {
    public var hash: String
    public var uid: String
    public var kind: String
    public var email: String
    public var createdAt: Int64
    public var expiresAt: Int64
    public init(hash: String, uid: String, kind: String, email: String, createdAt: Int64, expiresAt: Int64) {
        (self.hash, self.uid, self.kind, self.email, self.createdAt, self.expiresAt) = (hash, uid, kind, email, createdAt, expiresAt)
    }
}

public enum ActionCodeLookup: Sendable, Equatable {
    case valid(ActionCode)
    case expired
    /// Unknown, of another kind, or used.
    case invalid
}

public enum AccountStoreError: Error, Sendable, Equatable {
    case duplicateUID
    case duplicateEmail
    /// A provider's account is already linked to another user.
    case duplicateProviderLink
    case notFound
}

/// One use of a refresh token, for `AccountStore.rotateRefreshToken`.
public struct RefreshRotation: Sendable {
    /// The presented token's hash.
    public var hash: String
    /// The successor's hash, and the successor sealed for a retry (see `RefreshOutcome.retried`).
    public var newHash: String
    public var sealedNew: String
    /// Now, ms.
    public var at: Int64
    /// How long after a rotation a retry with the rotated token gets the same successor, ms.
    public var retryWindow: Int64

    public init(hash: String, newHash: String, sealedNew: String = "", at: Int64, retryWindow: Int64 = 0) {
        (self.hash, self.newHash, self.sealedNew, self.at, self.retryWindow) = (hash, newHash, sealedNew, at, retryWindow)
    }
}

extension AccountStore {
    /// A family for a plain sign-in at `time`.
    public func addRefreshToken(hash: String, uid: String, family: String, at time: Int64) throws {
        try addRefreshToken(hash: hash, uid: uid, family: family, signIn: SignInRecord(at: time))
    }

    /// A rotation with no retry window (a used token is always a replay).
    public func rotateRefreshToken(hash: String, newHash: String, at time: Int64) throws -> RefreshOutcome {
        try rotateRefreshToken(RefreshRotation(hash: hash, newHash: newHash, at: time))
    }
}

/// A user that could not be imported because the uid or the email is taken (by an existing
/// user or an earlier one in the same import).
public enum AccountImportError: Error, Sendable, Equatable, CustomStringConvertible {
    case duplicateUID(String)
    case duplicateEmail(uid: String)
    case duplicateProviderLink(uid: String)

    public var description: String {
        switch self {
        case .duplicateUID(let uid): return "a user with uid \(uid) already exists"
        case .duplicateEmail(let uid): return "the email of user \(uid) belongs to another user"
        case .duplicateProviderLink(let uid): return "a provider account of user \(uid) is linked to another user"
        }
    }
}
