import HearthJSON
@testable import HearthRules
import Testing

/// The reference app's rules (`rules.json`): who may read and write favourites.
@Suite struct ReferenceRulesTests {
    static let rules: RuleSet = {
        let text = String(decoding: Fixtures.bytes("reference-rules"), as: UTF8.self)
        return compile(text)
    }()

    static func favorite(_ id: String, owner: JSONValue = .string("alice"), dropping: String? = nil) -> JSONValue {
        var fields: [String: JSONValue] = [
            "id": .string(id), "name": .string("Oslo"), "createdAt": .int(testNow),
            "createdBy": owner, "latitude": .double(59.91), "longitude": .double(10.75),
        ]
        if let dropping { fields[dropping] = nil }
        return .object(fields)
    }

    static let data = JSONTreeSource(.object([
        "users": .object([
            "alice": .object(["favorites": .object(["f1": favorite("f1")]), "profile": .object(["name": "Alice"])]),
            "bob": .object(["favorites": .object(["b1": favorite("b1", owner: "bob")])]),
        ]),
    ]))

    struct Read: Sendable, CustomTestStringConvertible {
        let path: String
        let uid: String?
        let allowed: Bool
        var testDescription: String { "read \(path) as \(uid ?? "signed out")" }
    }

    @Test(arguments: [
        Read(path: "users/alice/favorites", uid: "alice", allowed: true),
        Read(path: "users/alice/favorites/f1", uid: "alice", allowed: true),
        Read(path: "users/alice/favorites/f1/name", uid: "alice", allowed: true),
        Read(path: "users/alice/favorites/missing", uid: "alice", allowed: true),
        Read(path: "users/alice/favorites", uid: "bob", allowed: false),
        Read(path: "users/alice/favorites/f1", uid: "bob", allowed: false),
        Read(path: "users/alice/favorites", uid: nil, allowed: false),
        // Rules are not filters: a grant on favourites does not open the user or the list.
        Read(path: "users/alice", uid: "alice", allowed: false),
        Read(path: "users", uid: "alice", allowed: false),
        Read(path: "", uid: "alice", allowed: false),
        Read(path: "users/alice/profile", uid: "alice", allowed: false),
    ])
    func readMatrix(_ read: Read) {
        let decision = Self.rules.canRead(path(read.path), data: Self.data, auth: auth(read.uid), now: testNow, query: nil)
        #expect(decision.allowed == read.allowed, "\(decision.explanation)")
    }

    struct Write: Sendable, CustomTestStringConvertible {
        let name: String
        let uid: String?
        let writes: [(path: String, value: JSONValue?)]
        let allowed: Bool
        var testDescription: String { name }
    }

    @Test(arguments: [
        Write(name: "own uid, complete favourite", uid: "alice",
              writes: [("users/alice/favorites/f2", favorite("f2"))], allowed: true),
        Write(name: "other uid", uid: "bob",
              writes: [("users/alice/favorites/f2", favorite("f2"))], allowed: false),
        Write(name: "signed out", uid: nil,
              writes: [("users/alice/favorites/f2", favorite("f2"))], allowed: false),
        Write(name: "missing required child latitude", uid: "alice",
              writes: [("users/alice/favorites/f2", favorite("f2", dropping: "latitude"))], allowed: false),
        Write(name: "missing required child createdBy", uid: "alice",
              writes: [("users/alice/favorites/f2", favorite("f2", dropping: "createdBy"))], allowed: false),
        Write(name: "createdBy names another user", uid: "alice",
              writes: [("users/alice/favorites/f2", favorite("f2", owner: "bob"))], allowed: false),
        Write(name: "createdBy is a number", uid: "alice",
              writes: [("users/alice/favorites/f2", favorite("f2", owner: .int(7)))], allowed: false),
        Write(name: "delete own favourite (validate skipped)", uid: "alice",
              writes: [("users/alice/favorites/f1", nil)], allowed: true),
        Write(name: "delete other's favourite", uid: "bob",
              writes: [("users/alice/favorites/f1", nil)], allowed: false),
        Write(name: "partial update of an existing complete favourite", uid: "alice",
              writes: [("users/alice/favorites/f1/name", "Bergen")], allowed: true),
        Write(name: "partial update creating an incomplete favourite", uid: "alice",
              writes: [("users/alice/favorites/new/name", "Bergen")], allowed: false),
        Write(name: "replace the whole list, all valid", uid: "alice",
              writes: [("users/alice/favorites", .object(["a": favorite("a"), "b": favorite("b")]))], allowed: true),
        Write(name: "replace the whole list, one invalid", uid: "alice",
              writes: [("users/alice/favorites", .object(["a": favorite("a"), "b": favorite("b", owner: "eve")]))], allowed: false),
        Write(name: "write above the granted node", uid: "alice",
              writes: [("users/alice", .object(["favorites": .object(["a": favorite("a")])]))], allowed: false),
        Write(name: "multi-path: own and other's", uid: "alice",
              writes: [("users/alice/favorites/a", favorite("a")), ("users/bob/favorites/a", favorite("a"))], allowed: false),
        Write(name: "multi-path: two own favourites", uid: "alice",
              writes: [("users/alice/favorites/a", favorite("a")), ("users/alice/favorites/b", favorite("b"))], allowed: true),
        Write(name: "multi-path: one valid, one incomplete", uid: "alice",
              writes: [("users/alice/favorites/a", favorite("a")), ("users/alice/favorites/b/name", "x")], allowed: false),
    ])
    func writeMatrix(_ write: Write) {
        let writes = write.writes.map { (path: path($0.path), value: $0.value) }
        let decision = Self.rules.canWrite(writes, data: Self.data, auth: auth(write.uid), now: testNow)
        #expect(decision.allowed == write.allowed, "\(decision.explanation)")
    }

    /// A uid that only looks like the key (canonically equivalent, different bytes) is
    /// another user.
    @Test func lookAlikeUidIsAnotherUser() {
        let composed = "\u{E9}"  // é
        let decomposed = "e\u{301}"  // e + combining acute
        #expect(composed == decomposed)  // Swift's == says equal…
        let target = path("users/\(composed)/favorites")
        #expect(Self.rules.canRead(target, data: Self.data, auth: auth(composed), now: testNow, query: nil).allowed)
        #expect(!Self.rules.canRead(target, data: Self.data, auth: auth(decomposed), now: testNow, query: nil).allowed)
    }
}
