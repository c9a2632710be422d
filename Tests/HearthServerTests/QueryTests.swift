import HearthJSON
import HearthRules
import Testing
@testable import HearthServer

/// Queries over REST (docs/protocol/rest.md §1.3), in-process through the router.
@Suite struct QueryTests {
    static let rules = #"""
    {"rules": {
      "dinos": {".read": true, ".write": true, ".indexOn": ["height", "dims/weight", ".value"]},
      "other": {".read": true}, "list": {".read": true, ".write": true},
      "paged": {".read": "query.orderByKey && query.limitToFirst <= 10", ".write": true}
    }}
    """#

    func harness() async throws -> RouterHarness {
        let h = try RouterHarness(policy: RulesAccessPolicy(rules: RuleSet.compile(Self.rules)))
        _ = await h.send("PUT", "/dinos.json", #"""
        {"lambeo":{"height":2.1,"dims":{"weight":3}},"stego":{"height":4,"dims":{"weight":5}},
         "trex":{"height":6,"dims":{"weight":8}},"bronto":{"height":12,"dims":{"weight":30}},"mini":{"dims":{"weight":1}}}
        """#)
        return h
    }

    func keys(_ text: String) -> Set<String> {
        guard case .object(let members)? = try? JSONParser.parse(Array(text.utf8)) else { return [] }
        return Set(members.keys.strings)
    }

    @Test func orderByChildWithBoundsAndLimits() async throws {
        let h = try await harness()
        #expect(keys(await h.send("GET", #"/dinos.json?orderBy="height"&startAt=3&endAt=10"#).text) == ["stego", "trex"])
        #expect(keys(await h.send("GET", #"/dinos.json?orderBy=%22height%22&limitToLast=2"#).text) == ["trex", "bronto"])
        #expect(keys(await h.send("GET", #"/dinos.json?orderBy="height"&limitToFirst=1"#).text) == ["mini"])  // missing sorts first
        #expect(keys(await h.send("GET", #"/dinos.json?orderBy="dims/weight"&equalTo=5"#).text) == ["stego"])
        #expect(await h.send("GET", #"/dinos.json?orderBy="height"&equalTo=99"#).text == "null")
        let values = await h.send("GET", #"/dinos.json?orderBy="height"&startAfter=4&endBefore=12"#)
        #expect(keys(values.text) == ["trex"])
    }

    @Test func orderByKeyAndValueAndPriority() async throws {
        let h = try await harness()
        #expect(keys(await h.send("GET", #"/dinos.json?orderBy="$key"&startAt="s"&limitToFirst=5"#).text) == ["stego", "trex"])
        let rules = try RuleSet.compile(#"{"rules": {".read": true, ".write": true, "scores": {".indexOn": ".value"}}}"#)
        let v = try RouterHarness(policy: RulesAccessPolicy(rules: rules))
        _ = await v.send("PUT", "/scores.json", #"{"a":3,"b":1,"c":2}"#)
        #expect(await v.send("GET", #"/scores.json?orderBy="$value"&limitToFirst=2"#).text == #"{"b":1,"c":2}"#)
        #expect(keys(await h.send("GET", #"/dinos.json?orderBy="$priority"&limitToFirst=2"#).text) == ["bronto", "lambeo"])  // no priorities: by key
        // Results render as arrays like any read when their keys are dense integers.
        _ = await h.send("PUT", "/list.json", #"["x","y","z"]"#)
        #expect(await h.send("GET", #"/list.json?orderBy="$key"&limitToFirst=2"#).text == #"["x","y"]"#)
    }

    @Test func badQueriesAre400WithFirebasesWording() async throws {
        let h = try await harness()
        let noOrder = await h.send("GET", "/dinos.json?limitToFirst=1")
        #expect(noOrder.status == 400 && noOrder.errorMessage == "orderBy must be defined when other query parameters are defined")
        let noIndex = await h.send("GET", #"/dinos.json?orderBy="name""#)
        #expect(noIndex.status == 400)
        #expect(noIndex.errorMessage == #"Index not defined, add ".indexOn": "name", for path "/dinos", to the rules"#)
        let noValueIndex = await h.send("GET", #"/other.json?orderBy="$value""#)
        #expect(noValueIndex.errorMessage == #"Index not defined, add ".indexOn": ".value", for path "/other", to the rules"#)
        for bad in [#"orderBy=height"#, #"orderBy="$key"&startAt=1"#, #"orderBy="$key"&limitToFirst=0"#,
                    #"orderBy="$key"&limitToFirst=1&limitToLast=1"#, #"orderBy="$key"&equalTo="a"&startAt="a""#,
                    #"orderBy="$key"&startAt={}"#, #"orderBy="a//b""#, #"orderBy="$key"&limitToFirst=x"#] {
            #expect(await h.send("GET", "/dinos.json?" + bad).status == 400, "\(bad)")
        }
    }

    @Test func rulesSeeTheQueryAndAreNotFilters() async throws {
        let h = try await harness()
        _ = await h.send("PUT", "/paged.json", #"{"a":1,"b":2}"#)
        #expect(await h.send("GET", #"/paged.json?orderBy="$key"&limitToFirst=5"#).status == 200)
        #expect(await h.send("GET", #"/paged.json?orderBy="$key"&limitToFirst=50"#).status == 401)
        #expect(await h.send("GET", "/paged.json").status == 401)
    }
}
