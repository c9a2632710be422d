import HearthJSON
import Testing
@testable import HearthTriggers

@Suite struct RefPatternTests {
    static func path(_ text: String) -> DataPath { try! DataPath(string: text) }

    @Test func capturesOneSegmentManySegmentsAndSkipsStars() throws {
        let favorites = try RefPattern("/users/{uid}/favorites/{favId}")
        #expect(favorites.match(Self.path("/users/u1/favorites/f1")) == ["uid": "u1", "favId": "f1"])
        #expect(favorites.match(Self.path("/users/u1/favorites")) == nil)
        #expect(favorites.match(Self.path("/users/u1/favorites/f1/name")) == nil)
        #expect(favorites.match(Self.path("/people/u1/favorites/f1")) == nil)
        let deep = try RefPattern("logs/{rest=**}/end")
        #expect(deep.match(Self.path("/logs/a/b/c/end")) == ["rest": "a/b/c"])
        #expect(deep.match(Self.path("/logs/end")) == ["rest": ""])  // zero segments [U]
        #expect(deep.match(Self.path("/logs/a/b")) == nil)
        let star = try RefPattern("/rooms/*/{msg=*}")
        #expect(star.match(Self.path("/rooms/r/m")) == ["msg": "m"])
        #expect(try RefPattern("/").match(.root) == [:])
        #expect(try RefPattern("/a/**").match(Self.path("/a/x/y")) == [:])
    }

    @Test func knowsWhichWritesCanReachAMatch() throws {
        let favorites = try RefPattern("/users/{uid}/favorites/{favId}")
        #expect(favorites.mayMatchBelow(.root))
        #expect(favorites.mayMatchBelow(Self.path("/users/u1")))
        #expect(!favorites.mayMatchBelow(Self.path("/rooms")))
        #expect(!favorites.mayMatchBelow(Self.path("/users/u1/favorites/f1/name")))
        #expect(try RefPattern("/a/{x=**}").mayMatchBelow(Self.path("/a/b/c/d")))
    }

    @Test(arguments: ["/a/{}", "/a/{1x}", "/a/{x=y}", "/a/b*c", "/a/{x}/{x}", "/a/**/b/**", "/a//b", "/a/b.c", "/a/{x"])
    func badPatternsAreRefused(_ text: String) {
        #expect(throws: RefPattern.ParseError.self) { try RefPattern(text) }
    }

    @Test func longAndDeepPatternsAreRefused() {
        #expect(throws: RefPattern.ParseError.self) { try RefPattern("/" + String(repeating: "a", count: RefPattern.maxLength)) }
        #expect(throws: RefPattern.ParseError.self) {
            try RefPattern(Array(repeating: "a", count: DataPath.maxSegments + 1).joined(separator: "/"))
        }
        #expect(throws: Never.self) { try RefPattern(Array(repeating: "a", count: DataPath.maxSegments).joined(separator: "/")) }
    }
}

@Suite struct TriggerConfigTests {
    static func parse(_ text: String) throws(TriggerConfigError) -> [TriggerDefinition] {
        try TriggerConfig.parse(Array(text.utf8), path: "t.json")
    }

    @Test func readsEveryField() throws {
        let definitions = try Self.parse("""
        {"triggers": [
          {"name": "favWritten", "event": "written", "ref": "/users/{uid}/favorites/{favId}",
           "url": "http://127.0.0.1:8080/", "retry": true},
          {"name": "gone", "event": "google.firebase.database.ref.v1.deleted", "ref": "/a/{x}", "url": "https://hooks.example/x",
           "instance": "{db}", "timeoutSeconds": 5, "headers": {"X-Secret": "s"}, "hmacSecret": "0123456789abcdef",
           "maxEventsPerSecond": 100000, "maxStoredBytes": 1048576, "maxConcurrency": 64}
        ]}
        """)
        #expect(definitions.count == 2)
        #expect(definitions[0].name == "favWritten" && definitions[0].kind == .written && definitions[0].retry)
        #expect(definitions[0].timeoutSeconds == TriggerLimits.defaultTimeoutSeconds && definitions[0].instance == nil)
        #expect(definitions[1].kind == .deleted && !definitions[1].retry && definitions[1].url.isTLS)
        #expect(definitions[1].timeoutSeconds == 5 && definitions[1].headers == ["X-Secret": "s"] && definitions[1].hmacSecret != nil)
        #expect(definitions[0].maxEventsPerSecond == nil && definitions[1].maxEventsPerSecond == TriggerLimits.eventsPerSecondRange.upperBound)
        #expect(definitions[0].maxStoredBytes == nil && definitions[1].maxStoredBytes == TriggerLimits.storedBytesRange.lowerBound)
        #expect(definitions[0].maxConcurrency == TriggerLimits.defaultMaxConcurrency && definitions[1].maxConcurrency == TriggerLimits.maxConcurrencyRange.upperBound)
    }

    /// Each error names the line of the trigger (or of the JSON error) and the reason.
    @Test(arguments: [
        ("{\"triggers\": [\n{\"name\": \"a\", \"event\": \"written\", \"ref\": \"/a\", \"url\": \"http://h/\"},\n{\"name\": \"b\", \"event\": \"changed\", \"ref\": \"/a\", \"url\": \"http://h/\"}]}", 3, "trigger \"b\": \"event\""),
        ("{\"triggers\": [\n\n  {\"name\": \"a\", \"event\": \"written\", \"ref\": \"/a\", \"url\": \"http://h/\", \"retries\": 3}]}", 3, "unknown field \"retries\""),
        ("{\"triggers\": [\n  {\"name\": \"a\",\n \"event\": \"written\" \"ref\": 1}]}", 3, "not valid JSON"),
        ("{\"triggers\": [], \"extra\": 1}", 1, "unknown member \"extra\""),
        ("{\"triggers\": [{\"name\": \"a\", \"event\": \"written\", \"ref\": \"/a/{\", \"url\": \"http://h/\"}]}", 1, "\"ref\""),
        ("{\"triggers\": [{\"name\": \"a\", \"event\": \"written\", \"ref\": \"/a\", \"url\": \"ftp://h/\"}]}", 1, "\"url\""),
        ("{\"triggers\": [{\"name\": \"a b\", \"event\": \"written\", \"ref\": \"/a\", \"url\": \"http://h/\"}]}", 1, "\"name\""),
        ("{\"triggers\": [{\"name\": \"a\", \"event\": \"written\", \"ref\": \"/a\", \"url\": \"http://h/\", \"timeoutSeconds\": 541}]}", 1, "timeoutSeconds"),
        ("{\"triggers\": [{\"name\": \"a\", \"event\": \"written\", \"ref\": \"/a\", \"url\": \"http://h/\", \"maxEventsPerSecond\": 0}]}", 1, "maxEventsPerSecond"),
        ("{\"triggers\": [{\"name\": \"a\", \"event\": \"written\", \"ref\": \"/a\", \"url\": \"http://h/\", \"maxEventsPerSecond\": 100001}]}", 1, "maxEventsPerSecond"),
        ("{\"triggers\": [{\"name\": \"a\", \"event\": \"written\", \"ref\": \"/a\", \"url\": \"http://h/\", \"maxStoredBytes\": 1048575}]}", 1, "maxStoredBytes"),
        ("{\"triggers\": [{\"name\": \"a\", \"event\": \"written\", \"ref\": \"/a\", \"url\": \"http://h/\", \"maxStoredBytes\": 1099511627777}]}", 1, "maxStoredBytes"),
        ("{\"triggers\": [{\"name\": \"a\", \"event\": \"written\", \"ref\": \"/a\", \"url\": \"http://h/\", \"maxStoredBytes\": \"64M\"}]}", 1, "maxStoredBytes"),
        ("{\"triggers\": [{\"name\": \"a\", \"event\": \"written\", \"ref\": \"/a\", \"url\": \"http://h/\", \"maxConcurrency\": 0}]}", 1, "\"maxConcurrency\" must be an integer in 1...64"),
        ("{\"triggers\": [{\"name\": \"a\", \"event\": \"written\", \"ref\": \"/a\", \"url\": \"http://h/\", \"maxConcurrency\": 65}]}", 1, "maxConcurrency"),
        ("{\"triggers\": [{\"name\": \"a\", \"event\": \"written\", \"ref\": \"/a\", \"url\": \"http://h/\", \"maxConcurrency\": 1.5}]}", 1, "maxConcurrency"),
        ("{\"triggers\": [{\"name\": \"a\", \"event\": \"written\", \"ref\": \"/a\", \"url\": \"http://h/\", \"headers\": {\"ce-id\": \"x\"}}]}", 1, "set by Hearth"),
        ("{\"triggers\": [{\"name\": \"a\", \"event\": \"written\", \"ref\": \"/a\", \"url\": \"http://h/\", \"hmacSecret\": \"short\"}]}", 1, "hmacSecret"),
        ("{\"triggers\": [{\"name\": \"a\", \"event\": \"written\", \"ref\": \"/a\", \"url\": \"http://h/\"},\n {\"name\": \"a\", \"event\": \"written\", \"ref\": \"/b\", \"url\": \"http://h/\"}]}", 2, "used twice"),
    ])
    func badFilesNameTheLineAndTheReason(_ text: String, _ line: Int, _ reason: String) {
        do {
            _ = try Self.parse(text)
            Issue.record("accepted")
        } catch {
            #expect(error.line == line, "\(error)")
            #expect(error.reason.contains(reason), "\(error)")
            #expect(error.description.hasPrefix("triggers file t.json:\(line): "))
        }
    }

    @Test func theLimitsAreCrossed() throws {
        func trigger(_ index: Int, headers: Int = 0) -> String {
            let pairs = (0..<headers).map { "\"X-H\($0)\": \"v\"" }.joined(separator: ",")
            return "{\"name\": \"t\(index)\", \"event\": \"written\", \"ref\": \"/a\", \"url\": \"http://h/\", \"headers\": {\(pairs)}}"
        }
        let most = (0..<TriggerLimits.maxTriggers).map { trigger($0) }.joined(separator: ",")
        #expect(try Self.parse("{\"triggers\": [\(most)]}").count == TriggerLimits.maxTriggers)
        #expect(throws: TriggerConfigError.self) { try Self.parse("{\"triggers\": [\(most), \(trigger(999))]}") }
        #expect(try Self.parse("{\"triggers\": [\(trigger(0, headers: TriggerLimits.maxHeaders))]}").count == 1)
        #expect(throws: TriggerConfigError.self) { try Self.parse("{\"triggers\": [\(trigger(0, headers: TriggerLimits.maxHeaders + 1))]}") }
    }
}
