import Foundation
import HearthAuth
import HearthJSON
import HearthStore
import HearthTesting
import Testing
@testable import HearthAccounts
@testable import HearthServer

/// Who owns an email address, at the account core, from literals: what a provider
/// sign-in decides, what a takeover and a mailed code's proof leave of an account, and
/// which providers are trusted for which addresses.
@Suite struct AddressOwnershipRuleTests {
    typealias Decision = AccountService.IdPDecision

    struct Case: Sendable, CustomTestStringConvertible {
        var linked = false, hasEmail = true, emailVerified = true, trusted = false
        var ownerVerified: Bool?
        var expected: Decision
        var testDescription: String { "linked \(linked) email \(hasEmail) verified \(emailVerified) trusted \(trusted) owner \(String(describing: ownerVerified))" }
    }

    static let cases: [Case] = [
        // A linked provider account signs its user in, whatever the token's email says.
        Case(linked: true, emailVerified: false, ownerVerified: false, expected: .signIn),
        Case(linked: true, trusted: true, ownerVerified: false, expected: .signIn),
        // Attack (a): an unverified email claims nothing, even a free address, and is not
        // even looked up (no needConfirmation that would tell the attacker it exists).
        Case(emailVerified: false, expected: .create(claimEmail: false)),
        Case(emailVerified: false, ownerVerified: false, expected: .create(claimEmail: false)),
        Case(emailVerified: false, trusted: true, ownerVerified: true, expected: .create(claimEmail: false)),
        Case(hasEmail: false, expected: .create(claimEmail: false)),
        // A verified email claims a free address.
        Case(expected: .create(claimEmail: true)),
        Case(trusted: true, expected: .create(claimEmail: true)),
        // An untrusted provider never takes an address from an account that has it.
        Case(ownerVerified: false, expected: .needConfirmation),
        Case(ownerVerified: true, expected: .needConfirmation),
        // Attack (b) undone by the owner: a trusted verified email takes over an account
        // that never verified its address; an account that did keeps it.
        Case(trusted: true, ownerVerified: false, expected: .takeOver),
        Case(trusted: true, ownerVerified: true, expected: .needConfirmation),
    ]

    @Test(arguments: cases) func aProviderSignInDecides(_ c: Case) {
        #expect(AccountService.decide(linked: c.linked, hasEmail: c.hasEmail, emailVerified: c.emailVerified, trusted: c.trusted,
                                      ownerVerified: c.ownerVerified) == c.expected)
    }

    /// Attack (b)'s account: the victim's address (unverified), the attacker's password
    /// and the attacker's own Google account linked.
    static func preHijacked(verified: Bool = false) -> UserRecord {
        var user = UserRecord(uid: "u1", email: "victim@gmail.com", passwordHash: "attacker-hash", provider: .password,
                              createdAt: 1_000, validSince: 1)
        user.emailVerified = verified
        user.passwordUpdatedAt = 1_000
        user.providerLinks = [ProviderLink(providerID: "google.com", rawID: "attacker", email: "attacker@gmail.com"),
                              ProviderLink(providerID: "oidc.corp", rawID: "attacker-corp", email: "victim@gmail.com")]
        return user
    }

    @Test func aTakeoverLeavesOnlyTheProvingLinkAndRefusesEveryEarlierToken() {
        let owner = ProviderLink(providerID: "google.com", rawID: "owner", email: "victim@gmail.com", displayName: "Victim")
        let user = AccountService.takenOver(Self.preHijacked(), by: owner, nowSeconds: 5_000)
        #expect(user.uid == "u1")
        #expect(user.passwordHash == nil && user.passwordUpdatedAt == nil)
        #expect(user.providerLinks == [owner])
        #expect(user.emailVerified)
        #expect(user.provider == .federated)
        #expect(user.displayName == "Victim")
        #expect(user.validSince == 5_001)  // tokens of the current second too
    }

    @Test func aResetOfAnUnverifiedAddressDropsEveryLinkAndTheOldPassword() {
        let (user, endsSessions) = AccountService.proven(Self.preHijacked(), newPasswordHash: "owner-hash", now: 7_000_000)
        #expect(endsSessions)
        #expect(user.providerLinks.isEmpty)
        #expect(user.passwordHash == "owner-hash" && user.passwordUpdatedAt == 7_000_000)
        #expect(user.emailVerified)
        #expect(user.provider == .password)
        #expect(user.validSince == 7_001)
    }

    @Test func aVerificationOfAnUnverifiedAddressDropsEveryLinkAndKeepsThePassword() {
        let (user, endsSessions) = AccountService.proven(Self.preHijacked(), newPasswordHash: nil, now: 7_000_000)
        #expect(endsSessions)  // a session may have come through a dropped link
        #expect(user.providerLinks.isEmpty)
        #expect(user.passwordHash == "attacker-hash")
        #expect(user.emailVerified)
        #expect(user.validSince == 7_001)
    }

    /// The everyday case: an account whose only credential is its password verifies its
    /// address. Nothing is dropped, so its sessions (the password's) go on.
    @Test func aVerificationThatDropsNothingEndsNoSession() {
        var passwordOnly = Self.preHijacked()
        passwordOnly.providerLinks = []
        let (user, endsSessions) = AccountService.proven(passwordOnly, newPasswordHash: nil, now: 7_000_000)
        #expect(!endsSessions)
        #expect(user.emailVerified && user.passwordHash == "attacker-hash")
        #expect(user.validSince == passwordOnly.validSince)
    }

    @Test func aResetOfAVerifiedAddressKeepsItsLinks() {
        let verified = Self.preHijacked(verified: true)
        let (user, endsSessions) = AccountService.proven(verified, newPasswordHash: "new-hash", now: 7_000_000)
        #expect(endsSessions)
        #expect(user.providerLinks == verified.providerLinks)  // linked while the address was proven
        #expect(user.passwordHash == "new-hash")
        #expect(user.validSince == 7_001)
    }

    @Test func googleIsTrustedForItsOwnAddressesByDefaultAndOthersForNone() throws {
        let google = IdentityProvider(providerID: "google.com", issuers: [], audiences: ["a"], keys: .file("/k"))
        #expect(google.trusts(email: "victim@gmail.com"))
        #expect(google.trusts(email: "victim@googlemail.com"))
        #expect(!google.trusts(email: "victim@example.com"))
        #expect(!google.trusts(email: "victim@evil.gmail.com"))
        #expect(!google.trusts(email: "no-at-sign"))
        let oidc = IdentityProvider(providerID: "oidc.corp", issuers: ["i"], audiences: ["a"], keys: .file("/k"))
        #expect(!oidc.trusts(email: "victim@gmail.com"))
        let corp = IdentityProvider(providerID: "oidc.corp", issuers: ["i"], audiences: ["a"], keys: .file("/k"),
                                    trustedEmailDomains: ["Corp.Example"])
        #expect(corp.trusts(email: "ann@corp.example"))
        #expect(!corp.trusts(email: "ann@example.com"))
        let any = IdentityProvider(providerID: "oidc.corp", issuers: ["i"], audiences: ["a"], keys: .file("/k"), trustedEmailDomains: ["*"])
        #expect(any.trusts(email: "ann@example.com"))
    }

    static func parse(_ entry: String) throws(IdentityProviderError) -> IdentityProvider {
        guard let provider = try IdentityProvider.parse(Array(#"{"providers": [\#(entry)]}"#.utf8)).first else {
            throw IdentityProviderError("none")
        }
        return provider
    }

    @Test func theProvidersFileNamesTrustedDomainsWithinTheLimit() throws {
        let base = #""issuer": "https://id.example", "audiences": ["a"], "jwksURL": "https://id.example/k""#
        #expect(try Self.parse(#"{"providerId": "oidc.corp", \#(base), "trustedEmailDomains": ["corp.example"]}"#).trustedEmailDomains == ["corp.example"])
        #expect(try Self.parse(#"{"providerId": "oidc.corp", \#(base)}"#).trustedEmailDomains == [])
        #expect(try Self.parse(#"{"providerId": "google.com", "audiences": ["a"]}"#).trustedEmailDomains == IdentityProvider.googleEmailDomains)
        #expect(try Self.parse(#"{"providerId": "google.com", "audiences": ["a"], "trustedEmailDomains": []}"#).trustedEmailDomains == [])
        let most = (0..<IdentityProvider.maxTrustedEmailDomains).map { #""d\#($0).example""# }.joined(separator: ", ")
        #expect(try Self.parse(#"{"providerId": "oidc.corp", \#(base), "trustedEmailDomains": [\#(most)]}"#).trustedEmailDomains.count
                == IdentityProvider.maxTrustedEmailDomains)
        #expect(throws: IdentityProviderError("providers[0]: trustedEmailDomains lists more than \(IdentityProvider.maxTrustedEmailDomains) domains")) {
            try Self.parse(#"{"providerId": "oidc.corp", \#(base), "trustedEmailDomains": [\#(most), "one.more"]}"#)
        }
        #expect(throws: IdentityProviderError(#"providers[0]: trustedEmailDomains must be an array of domains (or "*")"#)) {
            try Self.parse(#"{"providerId": "oidc.corp", \#(base), "trustedEmailDomains": "corp.example"}"#)
        }
        #expect(throws: IdentityProviderError("providers[0]: trustedEmailDomains is not for firebase (no sign-in)")) {
            try Self.parse(#"{"providerId": "firebase", "projectId": "p", "trustedEmailDomains": ["*"]}"#)
        }
    }
}

/// The account service on a store, with an injected clock: a verification of a
/// password-only account keeps its sessions, one of an address already verified changes
/// nothing, a reset ends every session, and a changed address is unverified until proven.
@Suite struct AddressProofServiceTests {
    @Test func aVerificationKeepsThePasswordsSessionsAResetEndsThem() throws {
        let clock = RefreshRetryAndRecentSignInTests.Clock()
        let (auth, store, dir) = try RefreshRetryAndRecentSignInTests.make(clock)
        defer { store.close(); withExtendedLifetime(dir) {} }
        let service = auth.service
        let session = try service.signUp(email: "mine@example.com", password: "secret1")
        let code = try service.createActionCode(.verifyEmail, for: session.user)
        #expect(try service.verifyEmail(code: code).emailVerified)
        // Only the password could have opened the sign-up's session: it goes on.
        #expect(try service.user(forIDToken: session.idToken).uid == session.user.uid)
        let refreshed = try service.refresh(session.refreshToken)
        // A second code for the verified address changes nothing.
        let second = try service.createActionCode(.verifyEmail, for: session.user)
        _ = try service.verifyEmail(code: second)
        #expect(try service.user(forIDToken: session.idToken).uid == session.user.uid)
        // A reset ends every session.
        clock.advance(seconds: 2)
        let reset = try service.createActionCode(.passwordReset, for: session.user)
        _ = try service.resetPassword(code: reset, newPassword: "secret2")
        #expect(throws: AuthError.invalidRefreshToken) { try service.refresh(refreshed.refreshToken) }
        #expect(throws: AuthError.tokenExpired) { try service.user(forIDToken: session.idToken) }
        let again = try service.signIn(email: "mine@example.com", password: "secret2")
        // A changed address is unverified again.
        var changes = AccountService.Changes()
        changes.email = "moved@example.com"
        #expect(try service.update(uid: again.user.uid, changes).0.emailVerified == false)
        #expect(try store.accounts.user(uid: again.user.uid)?.emailVerified == false)
    }
}
