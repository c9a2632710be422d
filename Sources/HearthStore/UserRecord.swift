/// One account as stored. Secrets are a hash only; `description` never shows it.
public struct UserRecord: Sendable, Equatable, CustomStringConvertible {
    public enum Provider: String, Sendable {
        case anonymous
        case password
        /// Created by a custom-token sign-in.
        case custom
        /// Created by an identity provider's sign-in: see `providerLinks`.
        case federated
    }

    public var uid: String
    public var email: String?
    public var passwordHash: String?
    public var displayName: String?
    public var photoURL: String?
    public var emailVerified = false
    public var disabled = false
    public var provider: Provider
    /// Custom claims as JSON object text, merged into ID tokens.
    public var customClaims: String?
    public var createdAt: Int64
    public var lastLoginAt: Int64?
    public var passwordUpdatedAt: Int64?
    /// Seconds since the epoch; ID tokens issued (`iat`) before it are refused.
    public var validSince: Int64
    /// The identity providers' accounts linked to this user, at most one per
    /// provider; stored in their own table, written with the user.
    public var providerLinks: [ProviderLink] = []

    public init(uid: String, email: String? = nil, passwordHash: String? = nil, provider: Provider, createdAt: Int64, validSince: Int64) {
        self.uid = uid
        self.email = email
        self.passwordHash = passwordHash
        self.provider = provider
        self.createdAt = createdAt
        self.validSince = validSince
    }

    public var description: String {
        "UserRecord(uid: \(uid), email: \(email ?? "-"), provider: \(provider.rawValue), disabled: \(disabled))"
    }
}

/// One identity provider's account linked to a user: Firebase's
/// `providerUserInfo` entry. `(providerID, rawID)` belongs to one user at most.
public struct ProviderLink: Sendable, Equatable {
    /// `google.com`, `apple.com`, `oidc.<name>`.
    public var providerID: String
    /// The provider's id of the account (its ID token's `sub`).
    public var rawID: String
    public var email: String?
    public var displayName: String?
    public var photoURL: String?

    public init(providerID: String, rawID: String, email: String? = nil, displayName: String? = nil, photoURL: String? = nil) {
        (self.providerID, self.rawID, self.email, self.displayName, self.photoURL) = (providerID, rawID, email, displayName, photoURL)
    }

    /// The `provider_links` columns, in the order both engines bind and decode them.
    package static let columns = "uid, provider_id, raw_id, email, display_name, photo_url"

    /// The values of `columns` for this link of `uid`.
    package func columnValues(uid: String) -> [UserRecord.ColumnValue] {
        func text(_ s: String?) -> UserRecord.ColumnValue { s.map { .text($0) } ?? .null }
        return [.text(uid), .text(providerID), .text(rawID), text(email), text(displayName), text(photoURL)]
    }

    /// A link from a `columns` row (column 0, the uid, is the caller's).
    package init(columnText text: (Int) -> String?) {
        self.init(providerID: text(1) ?? "", rawID: text(2) ?? "", email: text(3), displayName: text(4), photoURL: text(5))
    }
}

/// What happened when a refresh token was presented.
/// The sign-in a refresh-token family continues: every ID token minted from it keeps
/// `auth_time`, and a custom-token sign-in its provider and claims.
public struct SignInRecord: Sendable, Equatable {
    /// When the user signed in, ms.
    public var at: Int64
    /// `sign_in_provider` when not the user's own (`custom`); nil: the user's.
    public var provider: String?
    /// This sign-in's own claims, JSON object text (a custom token's `claims`).
    public var claims: String?

    public init(at: Int64, provider: String? = nil, claims: String? = nil) {
        (self.at, self.provider, self.claims) = (at, provider, claims)
    }
}

public enum RefreshOutcome: Sendable, Equatable {
    /// The token was current: it is now used up and `newHash` replaces it in its family.
    /// `signIn`: the family's sign-in (when, how, with which claims).
    case rotated(uid: String, signIn: SignInRecord)
    /// The token was rotated at `rotatedAt` (ms), within the retry window, and its successor
    /// has not been used: a retry whose answer was lost. Nothing changed; `sealedSuccessor`
    /// gives the same successor back to whoever holds the token.
    case retried(uid: String, signIn: SignInRecord, rotatedAt: Int64, sealedSuccessor: String)
    /// The token had been rotated before: a replay. Its whole family is now revoked.
    case reused(uid: String)
    /// Unknown, revoked, or its user is gone.
    case invalid
}

extension UserRecord {
    /// The `users` columns, in the order both engines bind and decode them.
    package static let columns = """
        uid, email, password_hash, display_name, photo_url, email_verified, disabled, provider,
        custom_claims, created_at, last_login_at, password_updated_at, valid_since
        """

    /// One value of a `columns` row, engine-neutral: text, an integer, or NULL.
    package enum ColumnValue: Sendable, Equatable {
        case text(String)
        case int(Int64)
        case null
    }

    /// The values of `columns` for this user, in order (booleans as 0/1).
    package var columnValues: [ColumnValue] {
        func text(_ s: String?) -> ColumnValue { s.map { .text($0) } ?? .null }
        func int(_ i: Int64?) -> ColumnValue { i.map { .int($0) } ?? .null }
        return [
            .text(uid), text(email), text(passwordHash), text(displayName), text(photoURL),
            .int(emailVerified ? 1 : 0), .int(disabled ? 1 : 0), .text(provider.rawValue),
            text(customClaims), .int(createdAt), int(lastLoginAt), int(passwordUpdatedAt), .int(validSince),
        ]
    }

    /// A user from a `columns` row: `text(i)` and `int(i)` read column `i` (nil: NULL).
    package init(columnText text: (Int) -> String?, int: (Int) -> Int64?) throws(StoreError) {
        guard let provider = Provider(rawValue: text(7) ?? "") else {
            throw StoreError.corrupt("user with unknown provider")
        }
        self.init(uid: text(0) ?? "", email: text(1), passwordHash: text(2), provider: provider,
                  createdAt: int(9) ?? 0, validSince: int(12) ?? 0)
        displayName = text(3)
        photoURL = text(4)
        emailVerified = (int(5) ?? 0) != 0
        disabled = (int(6) ?? 0) != 0
        customClaims = text(8)
        lastLoginAt = int(10)
        passwordUpdatedAt = int(11)
    }
}
