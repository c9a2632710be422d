import Testing
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
        #expect(try accounts.rotateRefreshToken(hash: "h1", newHash: "h2", at: 2) == .rotated(uid: "u"))
        #expect(try accounts.rotateRefreshToken(hash: "h2", newHash: "h3", at: 3) == .rotated(uid: "u"))
        // h1 was already used: replaying it revokes h3, the family's current token.
        #expect(try accounts.rotateRefreshToken(hash: "h1", newHash: "hx", at: 4) == .reused(uid: "u"))
        #expect(try accounts.rotateRefreshToken(hash: "h3", newHash: "h4", at: 5) == .invalid)
        #expect(try accounts.rotateRefreshToken(hash: "nope", newHash: "h5", at: 6) == .invalid)
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
