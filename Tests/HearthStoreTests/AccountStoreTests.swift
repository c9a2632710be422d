import Testing
@testable import HearthSQLite
@testable import HearthStore

@Suite struct AccountStoreTests {
    let dir = TemporaryDirectory()

    func open() throws -> SQLiteTreeStore { try SQLiteTreeStore(directory: dir.path) }

    static func user(_ uid: String, email: String? = nil) -> UserRecord {
        UserRecord(uid: uid, email: email, passwordHash: email == nil ? nil : "$scrypt$x", provider: email == nil ? .anonymous : .password,
                   createdAt: 1_700_000_000_000, validSince: 1_700_000_000)
    }

    @Test func usersRoundTripAndAreUniqueByUIDAndEmail() throws {
        let store = try open()
        let accounts = store.accounts
        var alice = Self.user("alice", email: "alice@example.com")
        alice.displayName = "Alice"
        alice.customClaims = #"{"admin":true}"#
        try accounts.insert(alice)
        #expect(try accounts.user(uid: "alice") == alice)
        #expect(try accounts.user(email: "alice@example.com") == alice)
        #expect(throws: AccountStoreError.duplicateUID) { try accounts.insert(Self.user("alice")) }
        #expect(throws: AccountStoreError.duplicateEmail) { try accounts.insert(Self.user("other", email: "alice@example.com")) }
        try accounts.insert(Self.user("anon"))
        #expect(try accounts.users(after: nil, limit: 10).map(\.uid) == ["alice", "anon"])
        #expect(try accounts.users(after: "alice", limit: 10).map(\.uid) == ["anon"])
        alice.disabled = true
        try accounts.update(alice)
        #expect(try accounts.user(uid: "alice")?.disabled == true)
        #expect(throws: AccountStoreError.notFound) { try accounts.update(Self.user("ghost")) }
        #expect(!alice.description.contains("scrypt"))
    }

    @Test func refreshTokensRotateAndAReplayRevokesTheFamily() throws {
        let store = try open()
        let accounts = store.accounts
        try accounts.insert(Self.user("u"))
        try accounts.addRefreshToken(hash: "h1", uid: "u", family: "f", at: 1)
        #expect(try accounts.rotateRefreshToken(hash: "h1", newHash: "h2", at: 2) == .rotated(uid: "u", signIn: SignInRecord(at: 1)))
        #expect(try accounts.rotateRefreshToken(hash: "h2", newHash: "h3", at: 3) == .rotated(uid: "u", signIn: SignInRecord(at: 1)))
        // h1 was already used: replaying it revokes h3, the family's current token.
        #expect(try accounts.rotateRefreshToken(hash: "h1", newHash: "hx", at: 4) == .reused(uid: "u"))
        #expect(try accounts.rotateRefreshToken(hash: "h3", newHash: "h4", at: 5) == .invalid)
        #expect(try accounts.rotateRefreshToken(hash: "nope", newHash: "h5", at: 6) == .invalid)
    }

    /// A retry with a rotated token, within the window and before its successor
    /// was used, gets the sealed successor back and changes nothing; past the window, or
    /// once the successor was used, it is a replay.
    @Test func aRetryWithinTheWindowIsNotAReplay() throws {
        let store = try open()
        let accounts = store.accounts
        try accounts.insert(Self.user("u"))
        try accounts.addRefreshToken(hash: "h1", uid: "u", family: "f", at: 1_000)
        let window: Int64 = 60_000
        func use(_ hash: String, _ next: String, at: Int64) throws -> RefreshOutcome {
            try accounts.rotateRefreshToken(RefreshRotation(hash: hash, newHash: next, sealedNew: "sealed-" + next, at: at, retryWindow: window))
        }
        #expect(try use("h1", "h2", at: 2_000) == .rotated(uid: "u", signIn: SignInRecord(at: 1_000)))
        let retried = RefreshOutcome.retried(uid: "u", signIn: SignInRecord(at: 1_000), rotatedAt: 2_000, sealedSuccessor: "sealed-h2")
        #expect(try use("h1", "other", at: 2_500) == retried)
        #expect(try use("h1", "other", at: 2_000 + window) == retried)  // the window's last millisecond
        // Its successor still works (nothing was revoked by the retries) and keeps the sign-in time.
        #expect(try use("h2", "h3", at: 3_000) == .rotated(uid: "u", signIn: SignInRecord(at: 1_000)))
        // Now the successor is used: the old token again is a replay, and revokes the family.
        #expect(try use("h1", "other", at: 3_500) == .reused(uid: "u"))
        #expect(try use("h3", "h4", at: 4_000) == .invalid)

        try accounts.addRefreshToken(hash: "k1", uid: "u", family: "g", at: 10_000)
        #expect(try use("k1", "k2", at: 11_000) == .rotated(uid: "u", signIn: SignInRecord(at: 10_000)))
        // One millisecond past the window: a replay.
        #expect(try use("k1", "other", at: 11_000 + window + 1) == .reused(uid: "u"))
        #expect(try use("k2", "k3", at: 11_000 + window + 2) == .invalid)
    }

    @Test func revocationAndDeletionEndEveryToken() throws {
        let store = try open()
        let accounts = store.accounts
        try accounts.insert(Self.user("u"))
        try accounts.addRefreshToken(hash: "a", uid: "u", family: "f1", at: 1)
        try accounts.addRefreshToken(hash: "b", uid: "u", family: "f2", at: 1)
        try accounts.revokeRefreshTokens(uid: "u")
        #expect(try accounts.rotateRefreshToken(hash: "a", newHash: "a2", at: 2) == .invalid)
        try accounts.addRefreshToken(hash: "c", uid: "u", family: "f3", at: 3)
        #expect(try accounts.delete(uid: "u"))
        #expect(try accounts.rotateRefreshToken(hash: "c", newHash: "c2", at: 4) == .invalid)
        #expect(try accounts.user(uid: "u") == nil)
        #expect(try accounts.delete(uid: "u") == false)
    }

    @Test func aDisabledUsersTokensDoNotRefresh() throws {
        let store = try open()
        var user = Self.user("d")
        try store.accounts.insert(user)
        try store.accounts.addRefreshToken(hash: "t", uid: "d", family: "f", at: 1)
        user.disabled = true
        try store.accounts.update(user)
        #expect(try store.accounts.rotateRefreshToken(hash: "t", newHash: "t2", at: 2) == .invalid)
    }
}
