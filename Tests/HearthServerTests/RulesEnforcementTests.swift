import HearthHTTP
import HearthJSON
import HearthRules
import HearthStore
import HearthTesting
import Testing
@testable import HearthServer

/// The reference rules enforced on every REST operation, for callers signed in with real
/// ID tokens (`Authorization: Bearer`).
@Suite struct RulesEnforcementTests {
    static let referenceRules = ReferenceRules.text

    let h: RouterHarness
    init() throws {
        h = try RouterHarness(policy: RulesAccessPolicy(rules: try RuleSet.compile(Self.referenceRules)))
    }

    static func favorite(_ id: String, by uid: String) -> String {
        #"{"id":"\#(id)","name":"Oslo","createdAt":1700000000000,"createdBy":"\#(uid)","latitude":59.9,"longitude":10.7}"#
    }

    @Test func ownerReadsAndWritesOwnFavorites() async throws {
        let put = await h.send("PUT", "/users/alice/favorites/f1.json", Self.favorite("f1", by: "alice"), headers: try h.bearer("alice"))
        #expect(put.status == 200)
        let post = await h.send("POST", "/users/alice/favorites.json", Self.favorite("f2", by: "alice"), headers: try h.bearer("alice"))
        #expect(post.status == 200)
        let get = await h.send("GET", "/users/alice/favorites.json", headers: try h.bearer("alice"))
        #expect(get.status == 200)
        guard case .object(let favorites)? = get.json else { Issue.record("not an object"); return }
        #expect(favorites.count == 2)
        #expect(await h.send("GET", "/users/alice/favorites.json?shallow=true", headers: try h.bearer("alice")).status == 200)
        #expect(await h.send("DELETE", "/users/alice/favorites/f1.json", headers: try h.bearer("alice")).status == 200)
    }

    @Test func othersAndTheUnauthenticatedAreDenied() async throws {
        _ = await h.send("PUT", "/users/alice/favorites/f1.json", Self.favorite("f1", by: "alice"), headers: try h.bearer("alice"))
        for headers in [try h.bearer("bob"), [] as [(String, String)]] {
            #expect(await h.send("GET", "/users/alice/favorites.json", headers: headers).status == 401)
            #expect(await h.send("GET", "/users/alice/favorites/f1.json", headers: headers).status == 401)
            #expect(await h.send("PUT", "/users/alice/favorites/f2.json", Self.favorite("f2", by: "alice"), headers: headers).status == 401)
            #expect(await h.send("DELETE", "/users/alice/favorites/f1.json", headers: headers).status == 401)
        }
        // Rules are not filters: alice may read her favourites, not their parent.
        #expect(await h.send("GET", "/users/alice.json", headers: try h.bearer("alice")).status == 401)
        #expect(await h.send("GET", "/.json", headers: try h.bearer("alice")).status == 401)
    }

    @Test func validateRejectsIncompleteOrForgedFavorites() async throws {
        let alice = try h.bearer("alice")
        #expect(await h.send("PUT", "/users/alice/favorites/f1.json", #"{"id":"f1","name":"x"}"#, headers: alice).status == 401)
        #expect(await h.send("PUT", "/users/alice/favorites/f1.json", Self.favorite("f1", by: "mallory"), headers: alice).status == 401)
        #expect(try h.store.readSync { try $0.exists(at: .root) } == false)
    }

    @Test func aMultiPathUpdateIsAllowedOrDeniedWhole() async throws {
        let alice = try h.bearer("alice")
        _ = await h.send("PUT", "/users/alice/favorites/f1.json", Self.favorite("f1", by: "alice"), headers: alice)
        // One part writes into bob's favourites: the whole update is denied, nothing changes.
        let mixed = await h.send("PATCH", "/users.json", #"{"alice/favorites/f1/name":"Bergen","bob/favorites/x/name":"y"}"#, headers: alice)
        #expect(mixed.status == 401)
        #expect(await h.send("GET", "/users/alice/favorites/f1/name.json", headers: alice).text == #""Oslo""#)
        // Each part checked against the state after all parts: a partial update of an
        // existing favourite keeps its required children, so it validates.
        let ok = await h.send("PATCH", "/users/alice/favorites.json", #"{"f1/name":"Bergen","f1/note":"fjords"}"#, headers: alice)
        #expect(ok.status == 200)
        #expect(await h.send("GET", "/users/alice/favorites/f1/name.json", headers: alice).text == #""Bergen""#)
    }

    @Test func reloadedRulesApplyToTheNextRequest() async throws {
        let policy = RulesAccessPolicy(rules: try RuleSet.compile(#"{"rules": {".read": false}}"#))
        let h = try RouterHarness(policy: policy)
        #expect(await h.send("GET", "/x.json").status == 401)
        policy.replace(try RuleSet.compile(#"{"rules": {".read": true}}"#))
        #expect(await h.send("GET", "/x.json").status == 200)
    }
}

@Suite struct ReferenceRulesFileTests {
    /// The repository's rules.json is the file the tests call the reference rules.
    @Test func theRepositoryRulesFileIsTheReferenceRules() throws {
        let root = String(#filePath).components(separatedBy: "/Tests/")[0]
        let file = try RulesLoader.readText(root + "/rules.json")
        #expect(try JSONParser.parse(file) == JSONParser.parse(ReferenceRules.text))
        _ = try RuleSet.compile(file)
    }
}
