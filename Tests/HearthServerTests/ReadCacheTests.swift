import HearthHTTP
import HearthJSON
import HearthRules
import HearthStore
import HearthTesting
import Synchronization
import Testing
@testable import HearthServer
@testable import HearthDatabase

/// `ReadCache` alone, fed from literals.
@Suite struct ReadCacheUnitTests {
    static let body: [UInt8] = Array(#"{"a":1}"#.utf8)

    static func filled(_ keys: [String], maxBytes: Int = ReadCache.defaultMaxBytes) -> ReadCache {
        let cache = ReadCache(maxBytes: maxBytes)
        for key in keys { #expect(cache.insert(key, body: body, ticket: cache.ticket())) }
        return cache
    }

    @Test func aChangeDropsItsOwnAncestorsAndDescendantsEntriesOnly() {
        let keys = ["", "users", "users/a", "users/a/favorites", "users/a/favorites/f1", "users/a/favorites/f1/name",
                    "users/ab", "users/b/favorites", "users/a/favoritesX"]
        let cache = Self.filled(keys)
        cache.invalidate(["users/a/favorites/f1"])
        let kept = keys.filter { cache.lookup($0) != nil }
        // "users/ab" and "users/a/favoritesX" share a string prefix, not a path prefix.
        #expect(kept == ["users/ab", "users/b/favorites", "users/a/favoritesX"])
    }

    @Test func aChangeAtTheRootDropsEverything() {
        let cache = Self.filled(["users/a", "users/b/favorites", "x"])
        cache.invalidate([""])
        #expect(cache.stats.entries == 0 && cache.stats.bytes == 0)
    }

    @Test func aChangeAboveEntriesFindsThemThroughTheDescendantCounts() {
        let cache = Self.filled(["users/a/favorites", "users/a/profile", "users/b/favorites"])
        cache.invalidate(["users/a"])
        #expect(cache.lookup("users/a/favorites") == nil && cache.lookup("users/a/profile") == nil)
        #expect(cache.lookup("users/b/favorites") != nil)
        // The counts were kept exact: a later change above finds the remaining entry.
        cache.invalidate(["users"])
        #expect(cache.stats.entries == 0)
    }

    @Test func aBodyReadBeforeAnOverlappingInvalidationIsRefused() {
        let cache = ReadCache()
        let ticket = cache.ticket()
        cache.invalidate(["users/a/favorites/f1/name"])
        #expect(!cache.insert("users/a/favorites", body: Self.body, ticket: ticket))  // ancestor of the change
        #expect(!cache.insert("users/a/favorites/f1/name/x", body: Self.body, ticket: ticket))  // below it
        #expect(cache.insert("users/b/favorites", body: Self.body, ticket: ticket))  // unrelated
        #expect(cache.insert("users/a/favorites", body: Self.body, ticket: cache.ticket()))  // read after it
    }

    @Test func aReadSpanningMoreInvalidationsThanTheHistoryIsRefused() {
        let cache = ReadCache()
        let ticket = cache.ticket()
        cache.invalidate((0..<ReadCache.invalidationHistory).map { "other/\($0)" })
        #expect(cache.insert("users/a", body: Self.body, ticket: ticket))  // exactly the history: still known
        let older = cache.ticket()
        cache.invalidate((0...ReadCache.invalidationHistory).map { "other/\($0)" })
        #expect(!cache.insert("users/b", body: Self.body, ticket: older))  // one more: cannot tell
    }

    @Test func theByteBoundEvictsTheOldestUnreadEntryFirst() {
        let body = [UInt8](repeating: 0x61, count: 1000)
        let cost = body.count + 1 + ReadCache.entryOverhead
        let cache = ReadCache(maxBytes: 3 * cost)
        for key in ["a", "b", "c"] { #expect(cache.insert(key, body: body, ticket: cache.ticket())) }
        #expect(cache.stats.bytes == 3 * cost)
        #expect(cache.lookup("a") != nil)  // a gets its second chance
        #expect(cache.insert("d", body: body, ticket: cache.ticket()))
        #expect(cache.stats.bytes <= 3 * cost)
        #expect(cache.lookup("b") == nil)
        #expect(cache.lookup("a") != nil && cache.lookup("c") != nil && cache.lookup("d") != nil)
    }

    @Test func aBodyOverTheEntryLimitIsNotKept() {
        let cache = ReadCache(maxBytes: 8 * ReadCache.maxEntryBytes)
        let atLimit = [UInt8](repeating: 0x61, count: ReadCache.maxEntryBytes - 1 - ReadCache.entryOverhead)
        #expect(cache.insert("k", body: atLimit, ticket: cache.ticket()))
        #expect(!cache.insert("j", body: atLimit + [0x61], ticket: cache.ticket()))
        #expect(cache.lookup("j") == nil)
    }

    @Test func aBodyTheCallerMayNotUseIsNeitherServedNorCountedAsAHit() {
        let cache = Self.filled(["a"])
        var asked = 0
        #expect(cache.lookup("a", if: { asked += 1; return false }) == nil)
        #expect(cache.lookup("b", if: { asked += 1; return true }) == nil)  // a miss never asks
        #expect(asked == 1)
        #expect(cache.stats.hits == 0 && cache.stats.misses == 1)
        #expect(cache.lookup("a") == Self.body && cache.stats.hits == 1)
    }

    @Test func zeroBytesTurnsItOff() {
        let cache = ReadCache(maxBytes: 0)
        #expect(!cache.isEnabled)
        #expect(!cache.insert("a", body: Self.body, ticket: cache.ticket()))
        #expect(cache.lookup("a") == nil)
    }

    @Test func churnKeepsTheEvictionQueueProportionalToTheEntries() {
        let cache = ReadCache()
        for i in 0..<20_000 {
            #expect(cache.insert("users/\(i % 10)", body: Self.body, ticket: cache.ticket()))
            cache.invalidate(["users/\(i % 10)"])
        }
        #expect(cache.stats.entries == 0)
        #expect(cache.queueLength <= 2 * cache.stats.entries + 64 + 1)
    }
}

/// The cache wired into the router (as `HearthService` wires it): answers stay exactly
/// what the store holds, and the rules still decide every read.
@Suite struct ReadCacheRouterTests {
    static let favorite = RulesEnforcementTests.favorite

    @Test func aRepeatedReadIsServedFromTheCacheAndEqualsTheStore() async throws {
        let h = try RouterHarness()
        _ = await h.send("PUT", "/users/a/favorites.json", #"{"f1":{"name":"Oslo","n":1},"f2":{"name":"Bergen","n":2}}"#)
        let first = await h.send("GET", "/users/a/favorites.json")
        let second = await h.send("GET", "/users/a/favorites.json")
        #expect(h.readCache!.stats.hits == 1)
        #expect(second.status == 200 && second.body == first.body)
        #expect(second.headers["Content-Type"] == JSONResponse.contentType)
        #expect(second.headers["Access-Control-Allow-Origin"] == "*")
        #expect(second.text == #"{"f1":{"n":1,"name":"Oslo"},"f2":{"n":2,"name":"Bergen"}}"#)
    }

    @Test func readsAfterEveryKindOfWriteSeeTheWrite() async throws {
        let h = try RouterHarness()
        let path = "/users/a/favorites.json"
        func cachedEqualsStore(_ step: String) async throws {
            _ = await h.send("GET", path)  // fills the cache (or hits it)
            let got = await h.send("GET", path)
            let stored = try h.store.readSync { try $0.value(at: DataPath(urlPath: "/users/a/favorites")) }
            let expected = JSONWriter.write(FirebaseTree.render(stored))
            #expect(got.status == 200, "\(step)")
            #expect(got.text == String(decoding: expected, as: UTF8.self), "\(step)")
        }
        try await cachedEqualsStore("empty")
        #expect(await h.send("PUT", "/users/a/favorites/f1.json", #"{"name":"Oslo"}"#).status == 200)
        try await cachedEqualsStore("put below")
        #expect(await h.send("PATCH", "/users/a/favorites/f1.json", #"{"note":"x"}"#).status == 200)
        try await cachedEqualsStore("patch below")
        #expect(await h.send("POST", path, #"{"name":"Bergen"}"#).status == 200)
        try await cachedEqualsStore("post at")
        #expect(await h.send("PATCH", "/.json", #"{"users/a/favorites/f1/name":"Trondheim","other/x":1}"#).status == 200)
        try await cachedEqualsStore("multi-path patch at the root")
        #expect(await h.send("PUT", "/users/a/favorites/f1/n.json", #"{".sv":{"increment":2}}"#).status == 200)
        try await cachedEqualsStore("server value")
        #expect(await h.send("PUT", "/users.json", #"{"a":{"favorites":{"g":{"name":"Tromsø"}}}}"#).status == 200)
        try await cachedEqualsStore("put above")
        #expect(await h.send("DELETE", "/users/a.json").status == 200)
        try await cachedEqualsStore("delete above")
        #expect(await h.send("GET", path).text == "null")
        #expect(h.readCache!.stats.hits >= 8)
    }

    @Test func randomWritesAndReadsAgreeWithTheStore() async throws {
        let h = try RouterHarness()
        var random = SplitMix64(seed: 0x5EAD_CAC4E)
        let segments = ["a", "b", "c"]
        func randomPath(maxDepth: Int) -> String {
            let depth = Int(random.next() % UInt64(maxDepth + 1))
            return "/" + (0..<depth).map { _ in segments[Int(random.next() % 3)] }.joined(separator: "/")
        }
        for step in 0..<300 {
            let target = randomPath(maxDepth: 3)
            let value = #"{"b":\#(step),"c":{"a":"\#(step)"}}"#
            switch random.next() % 4 {
            case 0: _ = await h.send("PUT", target + ".json", value)
            case 1: _ = await h.send("PATCH", target + ".json", value)
            case 2: _ = await h.send("DELETE", target + ".json")
            default: _ = await h.send("PUT", target + ".json", String(step))
            }
            for _ in 0..<3 {
                let read = randomPath(maxDepth: 4)
                let got = await h.send("GET", read + ".json")
                let stored = try h.store.readSync { try $0.value(at: DataPath(urlPath: read)) }
                #expect(got.text == String(decoding: JSONWriter.write(FirebaseTree.render(stored)), as: UTF8.self),
                        "step \(step): GET \(read)")
            }
        }
        #expect(h.readCache!.stats.hits > 100)  // the cache took part
    }

    @Test func aCachedBodyIsNeverShownToACallerTheRulesDeny() async throws {
        let h = try RouterHarness(policy: RulesAccessPolicy(rules: try RuleSet.compile(ReferenceRules.text)))
        let alice = try h.bearer("alice")
        #expect(await h.send("PUT", "/users/alice/favorites/f1.json", Self.favorite("f1", "alice"), headers: alice).status == 200)
        #expect(await h.send("GET", "/users/alice/favorites.json", headers: alice).status == 200)
        #expect(await h.send("GET", "/users/alice/favorites.json", headers: alice).status == 200)
        #expect(h.readCache!.stats.hits == 1)
        #expect(await h.send("GET", "/users/alice/favorites.json", headers: try h.bearer("bob")).status == 401)
        #expect(await h.send("GET", "/users/alice/favorites.json").status == 401)
    }

    @Test func rulesThatReadDataAreDecidedOnTheDataNotTheCache() async throws {
        let rules = #"{"rules": {".write": true, "docs": {".read": "root.child('open').val() === true"}}}"#
        let h = try RouterHarness(policy: RulesAccessPolicy(rules: try RuleSet.compile(rules)))
        _ = await h.send("PUT", "/open.json", "true")
        _ = await h.send("PUT", "/docs.json", #"{"d":1}"#)
        #expect(await h.send("GET", "/docs.json").status == 200)
        #expect(await h.send("GET", "/docs.json").status == 200)
        // The body of /docs is still cached (the write was elsewhere), but the rule now denies.
        _ = await h.send("PUT", "/open.json", "false")
        #expect(await h.send("GET", "/docs.json").status == 401)
        #expect(h.readCache!.stats.hits == 0)
    }

    @Test func queriesShallowExportPrettyAndETagReadsBypassIt() async throws {
        let h = try RouterHarness()
        _ = await h.send("PUT", "/a.json", #"{"x":{"y":1},"z":2}"#)
        _ = await h.send("GET", "/a.json")
        let before = h.readCache!.stats
        for target in ["/a.json?shallow=true", "/a.json?print=pretty", "/a.json?format=export",
                       #"/a.json?orderBy="$key"&limitToFirst=1"#] {
            #expect(await h.send("GET", target).status == 200)
        }
        let tagged = await h.send("GET", "/a.json", headers: [("X-Firebase-ETag", "true")])
        #expect(tagged.headers["ETag"] != nil)
        let after = h.readCache!.stats
        #expect(after.hits == before.hits && after.misses == before.misses)
        #expect(await h.send("GET", "/a.json?shallow=true").text == #"{"x":true,"z":true}"#)
    }

    @Test func offMeansEveryReadGoesToTheStore() async throws {
        let h = try RouterHarness(readCacheBytes: 0)
        #expect(h.readCache == nil)
        _ = await h.send("PUT", "/a.json", "1")
        #expect(await h.send("GET", "/a.json").text == "1")
    }

    /// A writer and a reader race on one location: after every acknowledged write the
    /// next read must show it, while other readers keep re-filling the cache from
    /// snapshots that may predate the write (the ticket check must refuse those).
    @Test func aReadAfterAnAcknowledgedWriteNeverSeesAnOlderValue() async throws {
        let h = try RouterHarness()
        _ = await h.send("PUT", "/race/v.json", "0")
        let stop = Flag()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<3 {
                group.addTask {
                    // A cache hit answers without suspending; yield so the writer's task
                    // gets a cooperative thread.
                    for _ in 0..<100_000 where !stop.isSet {
                        _ = await h.send("GET", "/race.json")
                        await Task.yield()
                    }
                }
            }
            group.addTask {
                for n in 1...300 {
                    let put = await h.send("PUT", "/race/v.json", String(n))
                    #expect(put.status == 200)
                    let read = await h.send("GET", "/race.json")
                    #expect(read.text == #"{"v":\#(n)}"#, "after write \(n)")
                    if read.text != #"{"v":\#(n)}"# { break }
                }
                stop.set()
            }
        }
        #expect(h.readCache!.stats.hits > 0)
    }
}

/// A one-way flag for stopping test loops.
private final class Flag: Sendable {
    private let value = Mutex(false)
    var isSet: Bool { value.withLock { $0 } }
    func set() { value.withLock { $0 = true } }
}
