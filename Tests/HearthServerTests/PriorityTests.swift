import HearthJSON
import Testing
@testable import HearthServer

/// Priorities (docs/protocol/rest.md §1.5): stored beside the tree, shown by
/// `format=export`, ordered by `orderBy="$priority"`, cleared when their node is replaced.
@Suite struct PriorityTests {
    @Test func prioritiesAreStoredAndOnlyExportShowsThem() async throws {
        let h = try RouterHarness()
        #expect(await h.send("PUT", "/ranked.json", #"{"a":{".value":"gold",".priority":1},"b":{"name":"x",".priority":"z"},"c":3}"#).status == 200)
        #expect(await h.send("GET", "/ranked.json").text == #"{"a":"gold","b":{"name":"x"},"c":3}"#)
        #expect(await h.send("GET", "/ranked.json?format=export").json
                == .object(["a": .object([".value": "gold", ".priority": 1]), "b": .object(["name": "x", ".priority": "z"]), "c": 3]))
        #expect(await h.send("GET", "/ranked/a.json?format=export").text == #"{".priority":1,".value":"gold"}"#)
        // Replacing a node clears its priority; writing below keeps the parent's.
        _ = await h.send("PUT", "/ranked/b/name.json", #""y""#)
        #expect(await h.send("GET", "/ranked/b.json?format=export").json == .object(["name": "y", ".priority": "z"]))
        _ = await h.send("PUT", "/ranked/a.json", #""silver""#)
        #expect(await h.send("GET", "/ranked/a.json?format=export").text == #""silver""#)
        _ = await h.send("DELETE", "/ranked/b.json")
        _ = await h.send("PUT", "/ranked/b.json", #"{"name":"back"}"#)
        #expect(await h.send("GET", "/ranked/b.json?format=export").text == #"{"name":"back"}"#)
    }

    @Test func orderByPriorityUsesThem() async throws {
        let h = try RouterHarness()
        _ = await h.send("PUT", "/p.json", #"{"k1":{".value":1,".priority":30},"k2":{".value":2,".priority":10},"k3":{".value":3,".priority":"a"},"k4":4}"#)
        // No priority first, then numbers, then strings.
        #expect(await h.send("GET", #"/p.json?orderBy="$priority"&limitToFirst=2"#).json == .object(["k4": 4, "k2": 2]))
        #expect(await h.send("GET", #"/p.json?orderBy="$priority"&startAt=20"#).json == .object(["k1": 1, "k3": 3]))
        #expect(await h.send("GET", #"/p.json?orderBy="$priority"&equalTo="a""#).json == .object(["k3": 3]))
    }

    @Test func badPrioritiesAre400() async throws {
        let h = try RouterHarness()
        for body in [#"{"a":1,".priority":true}"#, #"{".value":1,"x":2}"#, #"{".value":{"a":1}}"#, #"{"a":1,".priority":{"x":1}}"#] {
            #expect(await h.send("PUT", "/x.json", body).status == 400, "\(body)")
        }
        #expect(await h.send("GET", "/x.json").text == "null")
    }
}
