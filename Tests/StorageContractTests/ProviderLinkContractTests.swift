import HearthStore
import Testing

/// Provider links on every engine: written and read with their user, found by
/// provider account, one user per provider account, kept by an import, gone with the user.
@Suite struct ProviderLinkContractTests {
    @Test(arguments: ContractEngine.all)
    func linksPersistWithTheirUserAndBelongToOneUser(engine: ContractEngine) throws {
        let (place, _, store) = try StorageContractTests.fresh(engine)
        defer { store.close(); _ = place }
        let accounts = store.accountStore
        var ann = UserRecord(uid: "ann", email: "ann@example.com", provider: .federated, createdAt: 1, validSince: 0)
        ann.providerLinks = [ProviderLink(providerID: "google.com", rawID: "g-1", email: "ann@example.com", displayName: "Ann", photoURL: "https://p/a")]
        try accounts.insert(ann)
        #expect(try accounts.user(uid: "ann")?.providerLinks == ann.providerLinks)
        #expect(try accounts.user(email: "ann@example.com")?.providerLinks == ann.providerLinks)
        #expect(try accounts.user(providerID: "google.com", rawID: "g-1")?.uid == "ann")
        #expect(try accounts.user(providerID: "apple.com", rawID: "g-1") == nil)

        ann.providerLinks.append(ProviderLink(providerID: "apple.com", rawID: "a-1"))
        try accounts.update(ann)
        #expect(try accounts.user(uid: "ann")?.providerLinks.map(\.providerID) == ["apple.com", "google.com"])

        var bob = UserRecord(uid: "bob", provider: .anonymous, createdAt: 2, validSince: 0)
        try accounts.insert(bob)
        bob.providerLinks = [ProviderLink(providerID: "google.com", rawID: "g-1")]
        #expect(throws: AccountStoreError.duplicateProviderLink) { try accounts.update(bob) }
        #expect(try accounts.user(uid: "bob")?.providerLinks == [])
        #expect(try accounts.users(after: nil, limit: 10).map(\.providerLinks.count) == [2, 0])

        ann.providerLinks.removeAll { $0.providerID == "google.com" }
        try accounts.update(ann)
        #expect(try accounts.user(providerID: "google.com", rawID: "g-1") == nil)
        try accounts.delete(uid: "ann")
        #expect(try accounts.user(providerID: "apple.com", rawID: "a-1") == nil)

        var carol = UserRecord(uid: "carol", provider: .federated, createdAt: 3, validSince: 0)
        carol.providerLinks = [ProviderLink(providerID: "oidc.corp", rawID: "c-1")]
        var pending = [carol]
        #expect(try accounts.importUsers { pending.popLast() } == 1)
        #expect(try accounts.user(providerID: "oidc.corp", rawID: "c-1")?.uid == "carol")
        var dave = UserRecord(uid: "dave", provider: .federated, createdAt: 4, validSince: 0)
        dave.providerLinks = carol.providerLinks
        pending = [dave]
        #expect(throws: AccountImportError.duplicateProviderLink(uid: "dave")) { try accounts.importUsers { pending.popLast() } }
        #expect(try accounts.user(uid: "dave") == nil)
    }
}
