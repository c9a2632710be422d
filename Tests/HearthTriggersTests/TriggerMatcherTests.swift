import HearthDatabase
import HearthHTTPClient
import HearthJSON
import HearthSQLite
import HearthStore
import HearthTesting
import Testing
@testable import HearthTriggers

/// Which events a write causes, read on a real store's view before the write.
@Suite struct TriggerMatcherTests {
    let directory = TemporaryDirectory()
    let store: SQLiteTreeStore

    init() throws {
        store = try SQLiteTreeStore(directory: directory.path)
        let seed = try JSONParser.parse(#"{"users": {"u1": {"favorites": {"f1": {"name": "Oslo", "lat": 59}, "f2": {"name": "Rome"}}}}, "n": [10, 20]}"#)
        _ = try store.writeSync(.set(WriteEntry(path: .root, value: FirebaseTree.normalize(seed, at: .root))), check: nil)
    }

    static func path(_ text: String) -> DataPath { try! DataPath(string: text) }
    static func json(_ text: String) -> JSONValue { try! JSONParser.parse(text) }
    static let url = try! HTTPURL("http://127.0.0.1:1/")

    static func trigger(_ name: String, _ kind: TriggerEventKind, _ ref: String) -> TriggerDefinition {
        TriggerDefinition(name: name, kind: kind, ref: try! RefPattern(ref), url: url)
    }

    func events(_ triggers: [TriggerDefinition], _ operation: WriteOperation, limit: Int = TriggerLimits.maxEventsPerWrite) throws -> [MatchedEvent] {
        let matcher = TriggerMatcher(triggers: triggers, instance: "hearth")
        return try store.readSync { view in
            try matcher.events(before: view, applied: operation, auth: EventAuth(type: "admin", id: nil), limit: limit)
        }
    }

    func set(_ path: String, _ value: String?) -> WriteOperation {
        .set(WriteEntry(path: Self.path(path), value: value.map { try! FirebaseTree.normalize(Self.json($0), at: Self.path(path))! }))
    }

    @Test func aSetAtTheLocationGivesOneEventOfEachMatchingKind() throws {
        let all = TriggerEventKind.allCases.map { Self.trigger($0.rawValue, $0, "/users/{uid}/favorites/{favId}") }
        let update = try events(all, set("/users/u1/favorites/f1", #"{"name": "Oslo", "lat": 60}"#))
        #expect(update.map(\.trigger).sorted() == ["updated", "written"])
        #expect(update[0].location == Self.path("/users/u1/favorites/f1"))
        #expect(update[0].change.delta == Self.json(#"{"lat": 60}"#))
        let create = try events(all, set("/users/u1/favorites/f9", #"{"name": "Nice"}"#))
        #expect(create.map(\.trigger).sorted() == ["created", "written"])
        #expect(create[0].change == ValueChange(before: .null, after: Self.json(#"{"name": "Nice"}"#)))
        let delete = try events(all, set("/users/u1/favorites/f2", nil))
        #expect(delete.map(\.trigger).sorted() == ["deleted", "written"])
        #expect(delete[0].change.delta == .null && delete[0].change.before == Self.json(#"{"name": "Rome"}"#))
        #expect(try events(all, set("/users/u1/favorites/f2/name", #""Rome""#)).isEmpty)  // unchanged: no event
    }

    /// A write above the pattern: one event per matched child that changed, children taken
    /// from before or after.
    @Test func aWriteAtAParentGivesOneEventPerChangedChild() throws {
        let written = [Self.trigger("w", .written, "/users/{uid}/favorites/{favId}")]
        let replaced = try events(written, set("/users/u1/favorites", #"{"f1": {"name": "Oslo", "lat": 59}, "f3": {"name": "Bern"}}"#))
        #expect(replaced.map(\.location) == [Self.path("/users/u1/favorites/f2"), Self.path("/users/u1/favorites/f3")])
        let removedAll = try events(written, set("/users", nil))
        #expect(removedAll.count == 2 && removedAll.allSatisfy { $0.change.after == .null })
        let update: WriteOperation = .update(base: Self.path("/users/u1"), entries: [
            WriteEntry(path: Self.path("/users/u1/favorites/f1/lat"), value: .int(1)),
            WriteEntry(path: Self.path("/users/u1/favorites/f2/name"), value: nil),
            WriteEntry(path: Self.path("/users/u1/other"), value: .int(1)),
        ])
        let patched = try events(written, update)
        #expect(patched.map(\.location) == [Self.path("/users/u1/favorites/f1"), Self.path("/users/u1/favorites/f2")])
        #expect(patched[0].change.delta == Self.json(#"{"lat": 1}"#))
        #expect(patched[1].change.after == .null)  // its only child removed: the location vanishes
    }

    /// A write below the pattern: the location above changes.
    @Test func aWriteBelowGivesTheEventOfTheLocationAbove() throws {
        let written = [Self.trigger("w", .written, "/users/{uid}")]
        let below = try events(written, set("/users/u1/favorites/f1/name", #""Bergen""#))
        #expect(below.map(\.location) == [Self.path("/users/u1")])
        let change = try #require(below.first?.change)
        #expect(change.delta == Self.json(#"{"favorites": {"f1": {"name": "Bergen"}}}"#))
        #expect(ValueChange.merged(change.before, change.delta) == change.after)
        // Rendered as readers see it: integer keys as an array.
        let root = try events([Self.trigger("r", .written, "/")], set("/n/0", "11")).first?.change
        #expect(root?.before.objectValue?["n"] == Self.json("[10, 20]") && root?.delta == Self.json(#"{"n": [11, 20]}"#))
    }

    @Test func theDeltaMergedIntoTheDataGivesTheAfterValue() {
        let cases: [(String, String)] = [
            (#"{"a": 1, "b": {"c": 2, "d": 3}}"#, #"{"a": 1, "b": {"c": 4}, "e": [1, 2]}"#),
            (#"{"a": {"b": {"c": 1}}}"#, #"{"a": {"b": {"d": 1}}}"#),
            (#"{"a": 1}"#, #"[1, 2]"#), ("[1, 2]", #"{"a": 1}"#), ("1", #"{"a": 1}"#), (#"{"a": 1}"#, "null"),
        ]
        for (before, after) in cases {
            let change = ValueChange(before: Self.json(before), after: Self.json(after))
            #expect(ValueChange.merged(change.before, change.delta) == change.after, "\(before) -> \(after)")
        }
        #expect(ValueChange(before: Self.json(#"{"a": 1, "b": 2}"#), after: Self.json(#"{"a": 1}"#)).delta == Self.json(#"{"b": null}"#))
    }

    @Test func aWriteCausingMoreEventsThanTheLimitIsRefused() throws {
        let written = [Self.trigger("w", .written, "/many/{id}")]
        let limit = 5
        func values(_ count: Int) -> String { "{" + (0..<count).map { "\"k\($0)\": \($0 + 1)" }.joined(separator: ",") + "}" }
        #expect(try events(written, set("/many", values(limit)), limit: limit).count == limit)
        #expect(throws: DatabaseError.self) { try events(written, set("/many", values(limit + 1)), limit: limit) }
    }

    @Test func noTriggerOnTheWritesPathsMeansNoRead() throws {
        let matcher = TriggerMatcher(triggers: [Self.trigger("w", .written, "/users/{uid}/favorites/{favId}")], instance: "hearth")
        #expect(!matcher.mayMatch(set("/rooms/r1", "1")))
        #expect(matcher.mayMatch(set("/", "1")))
        #expect(matcher.mayMatch(set("/users/u1/favorites/f1/name", #""x""#)))
        var limited = Self.trigger("i", .written, "/a")
        limited.instance = try RefPattern("other")
        #expect(TriggerMatcher(triggers: [limited], instance: "hearth").triggers.isEmpty)
        limited.instance = try RefPattern("{db}")
        #expect(TriggerMatcher(triggers: [limited], instance: "hearth").triggers.count == 1)
    }

    @Test func theAuthAttributesFollowTheCaller() {
        #expect(EventAuth(Caller(auth: .null, isAdmin: true)) == EventAuth(type: "admin", id: nil))
        #expect(EventAuth(Caller(auth: .object(["uid": .string("u1")]))) == EventAuth(type: "app_user", id: "u1"))
        #expect(EventAuth(.unauthenticated) == EventAuth(type: "unauthenticated", id: nil))
    }
}
