import HearthStore

/// Who owns an email address (docs/api.md, "Who owns an email address"): the rules that
/// stop account pre-hijacking, where an attacker prepares an account with the victim's
/// address before the victim uses it, and keeps a way in after the victim takes it.
///
/// * An email a provider did not verify never claims an address: the account created (or
///   linked) keeps it on its provider link only; the account's own email stays empty, so
///   it blocks no sign-up and no password reset reaches the account.
/// * A code mailed to the address (password reset, email verification) proves it. When
///   the address had not been verified, every provider link goes: they were all made
///   before its owner proved it. A reset ends every session of the account, and so does a
///   verification that dropped a link (a session may have come through it); a
///   verification of an account whose only credential is its password ends none, so an
///   app that signs up, verifies and refreshes its token goes on as it does on Firebase.
/// * A trusted provider's verified email (`IdentityProvider.trustedEmailDomains`) proves
///   it too: signing in with it takes over an account whose address was never verified,
///   dropping its password, its other links and its sessions.
extension AccountService {
    /// What a provider sign-in does, decided from the token and the accounts it meets.
    enum IdPDecision: Equatable, Sendable {
        /// The provider's account is linked: sign its user in.
        case signIn
        /// A new account; `claimEmail`: with the token's email as the account's (verified).
        case create(claimEmail: Bool)
        /// The account with the token's address never verified it: the token proves it.
        case takeOver
        /// Another account has the verified address: nothing is created or signed in.
        case needConfirmation
    }

    /// The decision for a verified provider token. `linked`: its provider account is
    /// linked to a user. `hasEmail`/`emailVerified`: the token's email and its flag.
    /// `trusted`: the provider is trusted for that address. `owner`: whether the account
    /// with that address (if any) has verified it.
    static func decide(linked: Bool, hasEmail: Bool, emailVerified: Bool, trusted: Bool, ownerVerified: Bool?) -> IdPDecision {
        if linked { return .signIn }
        // An unverified (or absent) email is never looked up and never claimed.
        guard hasEmail, emailVerified else { return .create(claimEmail: false) }
        switch ownerVerified {
        case nil: return .create(claimEmail: true)
        case false?: return trusted ? .takeOver : .needConfirmation
        case true?: return .needConfirmation
        }
    }

    /// `user` after a trusted provider proved its address: the provider's account is its
    /// only credential (the password and the links made while the address was unproven,
    /// possibly by someone else, are gone), the address is verified, and every token
    /// issued so far is refused (`validSince`; the caller revokes refresh tokens).
    static func takenOver(_ user: UserRecord, by link: ProviderLink, nowSeconds: Int64) -> UserRecord {
        var user = user
        user.emailVerified = true
        user.passwordHash = nil
        user.passwordUpdatedAt = nil
        user.providerLinks = [link]
        user.provider = .federated
        if user.displayName == nil { user.displayName = link.displayName }
        if user.photoURL == nil { user.photoURL = link.photoURL }
        user.validSince = validSinceRevoking(user.validSince, nowSeconds: nowSeconds)
        return user
    }

    /// `user` after a mailed code proved its address (`newPasswordHash`: a reset's new
    /// password): verified; the provider links dropped when it had not been verified
    /// (made while anyone could have claimed the address). `endsSessions` when a password
    /// was set or a link dropped: then every token issued so far is refused (`validSince`;
    /// the caller revokes refresh tokens). A verification that dropped nothing leaves the
    /// sessions, which only the password can have opened.
    static func proven(_ user: UserRecord, newPasswordHash: String?, now: Int64) -> (user: UserRecord, endsSessions: Bool) {
        var user = user
        var endsSessions = newPasswordHash != nil
        if !user.emailVerified {
            endsSessions = endsSessions || !user.providerLinks.isEmpty
            user.providerLinks = []
            user.emailVerified = true
        }
        if let newPasswordHash {
            user.passwordHash = newPasswordHash
            user.passwordUpdatedAt = now
        }
        if user.passwordHash != nil { user.provider = .password }
        if endsSessions { user.validSince = validSinceRevoking(user.validSince, nowSeconds: now / 1000) }
        return (user, endsSessions)
    }

    /// Stores `user` (whose `validSince` already refuses earlier ID tokens) and revokes
    /// every refresh token of theirs: no session from before survives.
    func storeEndingSessions(_ user: UserRecord) throws(AuthError) {
        do {
            try accounts.update(user)
        } catch AccountStoreError.duplicateProviderLink {
            throw AuthError("FEDERATED_USER_ID_ALREADY_LINKED")
        } catch {
            throw .unexpected(error)
        }
        try wrap { try accounts.revokeRefreshTokens(uid: user.uid) }
    }

    /// Uses a mailed code's proof: see `proven` (a verification of an address already
    /// verified changes nothing). The code's address must still be the account's; a
    /// disabled account is refused.
    func prove(_ record: ActionCode, newPassword: String?) throws(AuthError) -> UserRecord {
        guard let user = try wrap({ try accounts.user(uid: record.uid) }), user.email == record.email else { throw AuthError("INVALID_OOB_CODE") }
        guard !user.disabled else { throw .userDisabled }
        // Verifying an address already verified proves nothing new: nothing changes.
        if newPassword == nil && user.emailVerified { return user }
        let hash = try newPassword.map { (password: String) throws(AuthError) -> String in try self.hash(password) }
        let (proven, endsSessions) = Self.proven(user, newPasswordHash: hash, now: clock())
        if endsSessions {
            try storeEndingSessions(proven)
        } else {
            try wrap { try accounts.update(proven) }
        }
        return proven
    }
}
