import HearthHTTP
import HearthJSON
import HearthRules
import HearthStore
import Testing
@testable import HearthServer

/// Firebase REST semantics (docs/protocol/rest.md §1.2–§1.9) through the router, over a
/// real store.
@Suite struct RESTSemanticsTests {
    let h: RouterHarness
    init() throws { h = try RouterHarness() }

    @Test func putThenGetReturnsTheSameJSON() async throws {
        let body = #"{"id":"f1","name":"Oslo","latitude":59.9139,"longitude":10.7522,"createdAt":1700000000000,"fav":true}"#
        let put = await h.send("PUT", "/users/u1/favorites/f1.json", body)
        #expect(put.status == 200)
        #expect(put.json == (try JSONParser.parse(body)))
        let get = await h.send("GET", "/users/u1/favorites/f1.json")
        #expect(get.status == 200)
        #expect(get.json == (try JSONParser.parse(body)))
        #expect(get.headers["Content-Type"] == "application/json; charset=utf-8")
    }

    @Test func integersStayIntegersAndDoublesStayExact() async {
        _ = await h.send("PUT", "/n.json", #"{"big":9007199254740993,"neg":-42,"d":0.1,"e":1.5e300,"five":5.0}"#)
        let get = await h.send("GET", "/n.json")
        #expect(get.text == #"{"big":9007199254740993,"d":0.1,"e":1.5e+300,"five":5,"neg":-42}"#)
    }

    @Test func arraysAreStoredAsObjectsAndRenderedBack() async {
        _ = await h.send("PUT", "/a.json", #"[10,20,null,40]"#)
        #expect(await h.send("GET", "/a.json").text == "[10,20,null,40]")
        #expect(await h.send("GET", "/a/1.json").text == "20")
        // Sparse beyond the 2x rule: rendered as an object.
        _ = await h.send("PUT", "/s.json", #"{"0":"a","7":"b"}"#)
        #expect(await h.send("GET", "/s.json").text == #"{"0":"a","7":"b"}"#)
    }

    @Test func nullAndEmptyObjectsDelete() async {
        _ = await h.send("PUT", "/x.json", #"{"a":{"b":1},"c":2}"#)
        _ = await h.send("PUT", "/x/a.json", "{}")
        #expect(await h.send("GET", "/x.json").text == #"{"c":2}"#)
        _ = await h.send("PUT", "/x/c.json", "null")
        #expect(await h.send("GET", "/x.json").text == "null")
        _ = await h.send("PUT", "/y.json", #"{"a":{"b":{"c":null}},"d":{}}"#)
        #expect(await h.send("GET", "/y.json").text == "null")
    }

    @Test func postCreatesOrderedPushIDs() async throws {
        var names: [String] = []
        for i in 0..<5 {
            let post = await h.send("POST", "/list.json", #"{"i":\#(i)}"#)
            #expect(post.status == 200)
            guard case .object(let o)? = post.json, case .string(let name)? = o["name"] else {
                Issue.record("no name in \(post.text)")
                return
            }
            names.append(name)
        }
        #expect(names.allSatisfy { $0.utf8.count == 20 })
        #expect(names == names.sorted())
        #expect(Set(names).count == 5)
        let empty = await h.send("POST", "/list.json", #""""#)
        #expect(empty.status == 200)
        let shallow = await h.send("GET", "/list.json?shallow=true")
        guard case .object(let keys)? = shallow.json else { Issue.record("not an object"); return }
        #expect(keys.count == 6)
    }

    @Test func patchUpdatesOnlyTheNamedChildrenAndMultiplePaths() async throws {
        _ = await h.send("PUT", "/users.json", #"{"alice":{"name":"A","city":"Oslo"},"bob":{"name":"B"}}"#)
        let patch = await h.send("PATCH", "/users.json", #"{"alice/city":"Rome","bob":{"age":3},"carol/name":"C","alice/name":null}"#)
        #expect(patch.status == 200)
        #expect(patch.json == (try JSONParser.parse(#"{"alice/city":"Rome","bob":{"age":3},"carol/name":"C","alice/name":null}"#)))
        #expect(await h.send("GET", "/users.json").text == #"{"alice":{"city":"Rome"},"bob":{"age":3},"carol":{"name":"C"}}"#)
    }

    @Test func oneInvalidKeyRejectsTheWholePatch() async {
        _ = await h.send("PUT", "/p.json", #"{"keep":1}"#)
        let bad = await h.send("PATCH", "/p.json", #"{"ok":2,"bad.key":3}"#)
        #expect(bad.status == 400)
        #expect(bad.errorMessage != nil)
        let nested = await h.send("PATCH", "/p.json", #"{"ok":2,"deep/x":{"a#b":1}}"#)
        #expect(nested.status == 400)
        let overlap = await h.send("PATCH", "/p.json", #"{"a":1,"a/b":2}"#)
        #expect(overlap.status == 400)
        #expect(await h.send("GET", "/p.json").text == #"{"keep":1}"#)
    }

    @Test func deleteRemovesAndAnswersNull() async {
        _ = await h.send("PUT", "/d/e/f.json", "1")
        let delete = await h.send("DELETE", "/d/e.json")
        #expect(delete.status == 200 && delete.text == "null")
        #expect(await h.send("GET", "/d.json").text == "null")
        #expect(await h.send("DELETE", "/never/there.json").status == 200)
    }

    @Test(arguments: ["GET", "PUT", "POST", "PATCH", "DELETE"])
    func printSilentAnswers204(method: String) async {
        let response = await h.send(method, "/q.json?print=silent", method == "PATCH" ? #"{"a":1}"# : "1")
        #expect(response.status == 204)
        #expect(response.body.isEmpty)
    }

    @Test func printPrettyIndents() async {
        _ = await h.send("PUT", "/pp.json", #"{"a":{"b":1}}"#)
        #expect(await h.send("GET", "/pp.json?print=pretty").text == "{\n  \"a\": {\n    \"b\": 1\n  }\n}")
        #expect(await h.send("GET", "/pp.json?print=loud").status == 400)
    }

    @Test func shallowListsKeysOrReturnsTheLeaf() async {
        _ = await h.send("PUT", "/sh.json", #"{"a":{"deep":{"x":1}},"b":2,"c":"s"}"#)
        #expect(await h.send("GET", "/sh.json?shallow=true").text == #"{"a":true,"b":true,"c":true}"#)
        #expect(await h.send("GET", "/sh/b.json?shallow=true").text == "2")
        #expect(await h.send("GET", "/nothing.json?shallow=true").text == "null")
    }

    @Test func methodOverrideTurnsAPostIntoAnotherMethod() async {
        _ = await h.send("POST", "/o.json", #"{"a":1}"#, headers: [("X-HTTP-Method-Override", "PUT")])
        #expect(await h.send("GET", "/o.json").text == #"{"a":1}"#)
        _ = await h.send("POST", "/o.json", #"{"b":2}"#, headers: [("X-HTTP-Method-Override", "PATCH")])
        #expect(await h.send("GET", "/o.json").text == #"{"a":1,"b":2}"#)
        _ = await h.send("POST", "/o.json", "", headers: [("X-HTTP-Method-Override", "DELETE")])
        #expect(await h.send("GET", "/o.json").text == "null")
        #expect(await h.send("GET", "/o.json", headers: [("X-HTTP-Method-Override", "DELETE")]).status == 400)
        #expect(await h.send("POST", "/o.json", "1", headers: [("X-HTTP-Method-Override", "TRACE")]).status == 400)
    }

    @Test func theJSONSuffixIsOptional() async {
        _ = await h.send("PUT", "/users/u/name", #""Ann""#)
        #expect(await h.send("GET", "/users/u/name.json").text == #""Ann""#)
        #expect(await h.send("GET", "/users/u.json").text == #"{"name":"Ann"}"#)
    }

    @Test(arguments: ["/a.b.json", "/a$b.json", "/a%23b.json", "/a%5Bb.json", "/a%5D.json", "/a%01.json", "/bad%zz.json"])
    func invalidPathsAre400(target: String) async {
        let response = await h.send("GET", target)
        #expect(response.status == 400)
        #expect(response.errorMessage?.hasPrefix("Invalid path") == true)
    }

    @Test func keyLengthAndDepthLimitsAreEnforced() async {
        let longest = String(repeating: "k", count: DataPath.maxKeyBytes)
        #expect(await h.send("PUT", "/\(longest).json", "1").status == 200)
        #expect(await h.send("PUT", "/\(longest)k.json", "1").status == 400)
        let deepest = (1...DataPath.maxSegments).map { "d\($0)" }.joined(separator: "/")
        #expect(await h.send("PUT", "/\(deepest).json", "1").status == 200)
        #expect(await h.send("PUT", "/\(deepest)/x.json", "1").status == 400)
        // The limit counts the levels inside the written value too.
        let shallowPath = (1..<DataPath.maxSegments).map { "d\($0)" }.joined(separator: "/")
        #expect(await h.send("PUT", "/\(shallowPath).json", #"{"a":{"b":1}}"#).status == 400)
    }

    @Test func badBodiesAre400WithTheFirebaseText() async {
        for body in ["", "{", "[1,]", "NaN", "{\"a\":1}x"] {
            let response = await h.send("PUT", "/b.json", body)
            #expect(response.status == 400)
            #expect(response.errorMessage == APIError.invalidData.message)
        }
        #expect(await h.send("PATCH", "/b.json", "[1,2]").status == 400)
        #expect(await h.send("PATCH", "/b.json", "1").status == 400)
        #expect(await h.send("GET", "/b.json").text == "null")
    }

    @Test func formatExportShowsTheStoredForm() async {
        _ = await h.send("PUT", "/arr.json", #"["a","b"]"#)
        #expect(await h.send("GET", "/arr.json").text == #"["a","b"]"#)
        #expect(await h.send("GET", "/arr.json?format=export").text == #"{"0":"a","1":"b"}"#)
        #expect(await h.send("GET", "/arr.json?format=csv").status == 400)
    }

    @Test func queryParametersAreNeverIgnored() async {
        _ = await h.send("PUT", "/q.json", #"{"a":1,"b":2}"#)
        #expect(await h.send("GET", "/q.json?orderBy=%22$key%22&limitToFirst=1").text == #"{"a":1}"#)
        #expect(await h.send("GET", "/q.json?limitToFirst=1").status == 400)
    }

    @Test func unknownMethodsAre405() async {
        let response = await h.send("BREW", "/x.json")
        #expect(response.status == 405)
        #expect(response.headers["Allow"] != nil)
    }

    @Test func healthAndReadiness() async {
        #expect(await h.send("GET", "/healthz").text == #"{"status":"ok"}"#)
        #expect(await h.send("GET", "/readyz").status == 200)
        #expect(await h.send("POST", "/healthz").status == 405)
        h.store.close()
        #expect(await h.send("GET", "/readyz").status == 503)
        #expect(await h.send("PUT", "/after-close.json", "1").status == 503)
    }

    @Test func corsPreflightIsAnswered() async {
        let response = await h.send("OPTIONS", "/users.json", headers: [("Access-Control-Request-Headers", "authorization, content-type\r\nX-Evil: 1")])
        #expect(response.status == 204)
        #expect(response.headers["Access-Control-Allow-Origin"] == "*")
        #expect(response.headers["Access-Control-Allow-Headers"]?.contains("\r") == false)
    }
}

/// The access gate is consulted on every read and write.
@Suite struct AccessGateTests {
    struct DenyAll: AccessPolicy {
        func canRead(_ path: DataPath, query: RuleQuery?, caller: Caller, view: any TreeView) -> Bool { false }
        func canWrite(_ operation: WriteOperation, caller: Caller, view: any TreeView) -> Bool { false }
    }

    @Test func deniedReadsAndWritesAre401AndWriteNothing() async throws {
        let h = try RouterHarness(policy: DenyAll())
        for (method, body) in [("GET", nil), ("PUT", "1"), ("POST", "1"), ("PATCH", #"{"a":1}"#), ("DELETE", nil)] as [(String, String?)] {
            let response = await h.send(method, "/secret.json", body)
            #expect(response.status == 401, "\(method)")
            #expect(response.errorMessage == "Permission denied")
        }
        #expect(await h.send("GET", "/secret.json?shallow=true").status == 401)
        #expect(try h.store.readSync { try $0.exists(at: .root) } == false)
    }
}
