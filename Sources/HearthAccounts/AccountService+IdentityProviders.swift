import HearthAuth
import HearthJSON
import HearthStore

/// Sign-in with an identity provider's ID token (`accounts:signInWithIdp`,
/// docs/protocol/auth.md §4.1): verify the token against the configured provider, then sign
/// in the user linked to its account, create one, or link it to the signed-in user.
extension AccountService {
    /// What `accounts:signInWithIdp` was given.
    public struct IdPRequest: Sendable {
        public var providerID: String?
        public var idToken: String?
        /// The raw nonce (Apple): the token's `nonce` claim must be its SHA-256 in hex.
        public var nonce: String?
        /// The signed-in user's ID token, to link the provider's account to them.
        public var linkTo: String?
        public init(providerID: String?, idToken: String?, nonce: String? = nil, linkTo: String? = nil) {
            (self.providerID, self.idToken, self.nonce, self.linkTo) = (providerID, idToken, nonce, linkTo)
        }
    }

    /// What happened.
    public struct IdPOutcome: Sendable {
        /// The provider's account, as verified.
        public var link: ProviderLink
        public var emailVerified: Bool
        /// The token's claims (`rawUserInfo`).
        public var claims: [JSONKey: JSONValue]
        /// Signed in (nil when `needConfirmation`).
        public var session: Session?
        public var isNewUser: Bool
        /// Another account already has the token's (verified) email: nothing was signed in
        /// or created (Firebase's `needConfirmation`; the app signs in to that account and links).
        public var needConfirmation: Bool
    }

    public static let invalidIdPResponse = "INVALID_IDP_RESPONSE"

    static func idpFailure(_ reason: String) -> AuthError { AuthError(invalidIdPResponse, detail: reason) }

    /// Signs in (or links) with a provider's ID token. Blocks (key fetches, the store).
    public func signIn(idp request: IdPRequest) throws(AuthError) -> IdPOutcome {
        guard let id = request.providerID, !id.isEmpty else { throw AuthError("INVALID_PROVIDER_ID", detail: "providerId is missing") }
        guard let providers = identityProviders, let provider = providers.provider(id), id != IdentityProvider.firebase else {
            throw AuthError("OPERATION_NOT_ALLOWED", detail: "the identity provider \(id) is not configured on this server")
        }
        guard let token = request.idToken, !token.isEmpty else { throw Self.idpFailure("postBody has no id_token") }
        let claims: [JSONKey: JSONValue]
        do {
            claims = try providers.verify(token, provider: provider.providerID)
        } catch .token(let failure) {
            throw Self.idpFailure(failure.description)
        } catch .keysUnavailable {
            throw Self.idpFailure("the provider's keys could not be fetched")
        } catch {
            throw AuthError("OPERATION_NOT_ALLOWED", detail: "the identity provider \(id) is not configured on this server")
        }
        try Self.checkNonce(claims["nonce"], raw: request.nonce)
        let emailVerified = Self.flag(claims["email_verified"])
        let email = claims["email"]?.stringValue.flatMap(Credentials.normalizedEmail)
        let link = ProviderLink(providerID: id, rawID: claims["sub"]?.stringValue ?? "", email: email,
                                displayName: claims["name"]?.stringValue, photoURL: claims["picture"]?.stringValue)
        var outcome = IdPOutcome(link: link, emailVerified: emailVerified, claims: claims, session: nil, isNewUser: false, needConfirmation: false)
        let now = clock()
        // The token proves its email to Hearth: verified by a provider trusted for it.
        let trusted = emailVerified && email.map(provider.trusts(email:)) == true
        if let linkTo = request.linkTo {
            outcome.session = try self.link(link, emailVerified: emailVerified, trusted: trusted, to: linkTo, now: now)
            return outcome
        }
        let linked = try wrap { try accounts.user(providerID: id, rawID: link.rawID) }
        // The account holding the token's address: looked up for a verified email only.
        var owner: UserRecord?
        if linked == nil, emailVerified, let email { owner = try wrap { try accounts.user(email: email) } }
        switch Self.decide(linked: linked != nil, hasEmail: email != nil, emailVerified: emailVerified, trusted: trusted,
                           ownerVerified: owner?.emailVerified) {
        case .signIn:
            guard var user = linked, !user.disabled else { throw .userDisabled }
            user.providerLinks = user.providerLinks.map { $0.providerID == id ? link : $0 }
            user.lastLoginAt = now
            try wrap { try accounts.update(user) }
            outcome.session = try startSession(for: user, now: now, provider: id)
        case .needConfirmation:
            outcome.needConfirmation = true
        case .takeOver:
            guard let owner, !owner.disabled else { throw .userDisabled }
            var user = Self.takenOver(owner, by: link, nowSeconds: now / 1000)
            user.lastLoginAt = now
            try storeEndingSessions(user)
            outcome.session = try startSession(for: user, now: now, provider: id)
        case .create(let claimEmail):
            try create(link, email: claimEmail ? email : nil, now: now, into: &outcome)
        }
        return outcome
    }

    /// A new user for `link`, with `email` (verified) as its address when given.
    private func create(_ link: ProviderLink, email: String?, now: Int64, into outcome: inout IdPOutcome) throws(AuthError) {
        var user = UserRecord(uid: try wrap { try Self.newUID() }, email: email, provider: .federated, createdAt: now, validSince: now / 1000)
        user.emailVerified = email != nil
        user.displayName = link.displayName
        user.photoURL = link.photoURL
        user.providerLinks = [link]
        user.lastLoginAt = now
        do {
            try accounts.insert(user)
        } catch AccountStoreError.duplicateEmail {
            outcome.needConfirmation = true
            return
        } catch AccountStoreError.duplicateProviderLink {
            // Signed up at the same moment elsewhere: sign in to that account.
            guard let created = try wrap({ try accounts.user(providerID: link.providerID, rawID: link.rawID) }), !created.disabled else {
                throw .userDisabled
            }
            outcome.session = try startSession(for: created, now: now, provider: link.providerID)
            return
        } catch {
            throw .unexpected(error)
        }
        outcome.isNewUser = true
        outcome.session = try startSession(for: user, now: now, provider: link.providerID)
    }

    /// Links `link` to the user of `idToken` (an anonymous user keeps their uid). Refused:
    /// the provider's account belongs to another user (`FEDERATED_USER_ID_ALREADY_LINKED`),
    /// or the user has another account of this provider (`PROVIDER_ALREADY_LINKED`). A
    /// verified email becomes the address of a user without one (if no one has it); a
    /// `trusted` one for the user's own unverified address verifies it.
    func link(_ link: ProviderLink, emailVerified: Bool, trusted: Bool, to idToken: String, now: Int64) throws(AuthError) -> Session {
        var user = try user(forIDToken: idToken)
        if let owner = try wrap({ try accounts.user(providerID: link.providerID, rawID: link.rawID) }), owner.uid != user.uid {
            throw AuthError("FEDERATED_USER_ID_ALREADY_LINKED")
        }
        if user.providerLinks.contains(where: { $0.providerID == link.providerID && $0.rawID != link.rawID }) {
            throw AuthError("PROVIDER_ALREADY_LINKED")
        }
        user.providerLinks = user.providerLinks.filter { $0.providerID != link.providerID } + [link]
        if user.provider == .anonymous { user.provider = .federated }
        if user.email == nil, let email = link.email, emailVerified, try wrap({ try accounts.user(email: email) }) == nil {
            user.email = email
            user.emailVerified = true
        }
        if trusted, let email = link.email, email == user.email { user.emailVerified = true }
        if user.displayName == nil { user.displayName = link.displayName }
        if user.photoURL == nil { user.photoURL = link.photoURL }
        user.lastLoginAt = now
        do {
            try accounts.update(user)
        } catch AccountStoreError.duplicateProviderLink {
            throw AuthError("FEDERATED_USER_ID_ALREADY_LINKED")
        } catch AccountStoreError.duplicateEmail {
            throw .emailExists
        } catch {
            throw .unexpected(error)
        }
        return try startSession(for: user, now: now, provider: link.providerID)
    }

    /// Apple's nonce rule, for every provider: a token with a `nonce` claim needs the raw
    /// nonce, whose SHA-256 in lower-case hex is the claim; a raw nonce needs the claim.
    static func checkNonce(_ claim: JSONValue?, raw: String?) throws(AuthError) {
        let raw = raw.flatMap { $0.isEmpty ? nil : $0 }
        switch (claim?.stringValue, raw) {
        case (nil, nil): return
        case (nil, _?): throw idpFailure("the id_token has no nonce, but one was sent")
        case (_?, nil): throw idpFailure("the id_token has a nonce: send the raw nonce")
        case (let expected?, let raw?):
            let hashed = Hex.encode(SHA256.hash(Array(raw.utf8)))
            guard ConstantTime.equals(Array(hashed.utf8), Array(expected.utf8)) else {
                throw idpFailure("the nonce does not match the id_token's (its SHA-256 in hex)")
            }
        }
    }

    /// A boolean claim Apple may send as a string.
    static func flag(_ value: JSONValue?) -> Bool {
        value == .bool(true) || value == .string("true")
    }

    /// `firebase.identities` of `user`'s ID tokens: `email` and each linked provider's ids.
    static func identities(of user: UserRecord) -> [String: [String]] {
        var identities = user.email.map { ["email": [$0]] } ?? [:]
        for link in user.providerLinks { identities[link.providerID] = [link.rawID] }
        return identities
    }

    /// The `providerUserInfo` entry of a link (`federatedId`: Google's issuer-qualified id).
    public static func providerInfo(_ link: ProviderLink) -> JSONValue {
        var fields: [JSONKey: JSONValue] = [
            "providerId": .string(link.providerID), "rawId": .string(link.rawID),
            "federatedId": .string(link.providerID == IdentityProvider.google ? "https://accounts.google.com/" + link.rawID : link.rawID),
        ]
        if let email = link.email { fields["email"] = .string(email) }
        if let name = link.displayName { fields["displayName"] = .string(name) }
        if let url = link.photoURL { fields["photoUrl"] = .string(url) }
        return .object(fields)
    }
}
