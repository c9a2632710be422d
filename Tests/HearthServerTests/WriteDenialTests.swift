import HearthHTTP
import HearthJSON
import HearthRules
import HearthStore
import HearthTesting
import Testing
@testable import HearthServer

/// What a refused write says (issue 13): a failed `.validate` keeps Firebase's 401
/// `{"error":"Permission denied"}` and adds a `"detail"` member naming the node and rule;
/// a write too large to check against the rules is a 413 that says so, not a permission error.
@Suite struct WriteDenialTests {
    let h: RouterHarness
    init() throws {
        h = try RouterHarness(policy: RulesAccessPolicy(rules: try RuleSet.compile(ReferenceRules.text)))
    }

    func favorite(_ id: String, by uid: String, latitude: String = "59.9") -> String {
        #"{"id":"\#(id)","name":"Oslo","createdAt":1700000000000,"createdBy":"\#(uid)","latitude":\#(latitude),"longitude":10.7}"#
    }

    func members(_ response: HTTPResponse) -> [JSONKey: JSONValue] {
        response.json?.objectValue ?? [:]
    }

    @Test func aFailedValidateNamesTheNodeAndRuleBesideFirebasesError() async throws {
        // createdBy must be the writer: the favourite's .validate fails.
        let bad = await h.send("PUT", "/users/alice/favorites/f1.json", favorite("f1", by: "mallory"), headers: try h.bearer("alice"))
        #expect(bad.status == 401)
        let body = members(bad)
        #expect(body["error"] == "Permission denied")
        let detail = try #require(body["detail"]?.stringValue)
        #expect(detail == ".validate failed at /users/alice/favorites/f1 (rule /rules/users/$uid/favorites/$favoriteId/.validate)")
        // A missing grant says nothing more than Firebase does.
        let stranger = await h.send("PUT", "/users/alice/favorites/f2.json", favorite("f2", by: "bob"), headers: try h.bearer("bob"))
        #expect(stranger.status == 401)
        #expect(stranger.text == #"{"error":"Permission denied"}"#)
    }

    @Test func aWriteTooLargeToValidateIs413NotPermissionDenied() async throws {
        // 50,000 valid favourites (the issue's case): the reference rules' checks run out of
        // the default evaluation budget (`RuleLimits.defaultMaxEvaluationSteps`). They are
        // 300,000 nodes, past the store's default `maxNodesPerWrite`, which would refuse
        // them first (WriteSizeLimitTests): raised here so the rules' budget is what is crossed.
        var options = StoreOptions()
        options.maxNodesPerWrite = 1_000_000
        let h = try RouterHarness(policy: RulesAccessPolicy(rules: try RuleSet.compile(ReferenceRules.text)), storeOptions: options)
        var body = "{"
        for i in 0..<50_000 {
            if i > 0 { body += "," }
            body += "\"f\(i)\":" + favorite("f\(i)", by: "alice")
        }
        body += "}"
        let put = await h.send("PUT", "/users/alice/favorites.json", body, headers: try h.bearer("alice"))
        #expect(put.status == 413)
        let error = try #require(members(put)["error"]?.stringValue)
        #expect(error == "Write too large to validate: checking it against the rules took more than \(RuleLimits.defaultMaxEvaluationSteps) evaluation steps; write fewer nodes at once")
        #expect(await h.send("GET", "/users/alice/favorites/f0.json", headers: try h.bearer("alice")).text == "null")
        // The same favourites in smaller writes are fine.
        let part = "{" + (0..<100).map { "\"f\($0)\":" + favorite("f\($0)", by: "alice") }.joined(separator: ",") + "}"
        #expect(await h.send("PUT", "/users/alice/favorites.json", part, headers: try h.bearer("alice")).status == 200)
    }

    @Test func aWriteOverTheValidatedNodeCapIs413() async throws {
        let h = try RouterHarness(policy: RulesAccessPolicy(rules: try RuleSet.compile(ReferenceRules.text, limits: RuleLimits(maxValidatedNodes: 10))))
        let one = "{\"f1\":" + favorite("f1", by: "alice") + "}"
        #expect(await h.send("PATCH", "/users/alice/favorites.json", one, headers: try h.bearer("alice")).status == 200)
        // Nodes walked are those with rules below the write: one per favourite here.
        let ten = "{" + (0..<10).map { "\"f\($0)\":" + favorite("f\($0)", by: "alice") }.joined(separator: ",") + "}"
        #expect(await h.send("PUT", "/users/alice/favorites.json", ten, headers: try h.bearer("alice")).status == 200)
        let eleven = "{" + (0..<11).map { "\"f\($0)\":" + favorite("f\($0)", by: "alice") }.joined(separator: ",") + "}"
        let put = await h.send("PUT", "/users/alice/favorites.json", eleven, headers: try h.bearer("alice"))
        #expect(put.status == 413)
        #expect(members(put)["error"] == .string("Write too large to validate: it has more than 10 nodes under .validate rules; write fewer nodes at once"))
    }

    @Test func aWriteOverTheEvaluationBudgetIs413() async throws {
        let rules = #"{"rules": {".write": true, "$k": {".validate": "newData.isString() && newData.val().matches(/^a+b$/)"}}}"#
        let h = try RouterHarness(policy: RulesAccessPolicy(rules: try RuleSet.compile(rules, limits: RuleLimits(maxEvaluationSteps: 1_000))))
        let small = await h.send("PUT", "/x.json", #""aab""#)
        #expect(small.status == 200)
        let big = await h.send("PUT", "/y.json", "\"" + String(repeating: "a", count: 5_000) + "b\"")
        #expect(big.status == 413)
        #expect(members(big)["error"] == .string("Write too large to validate: checking it against the rules took more than 1000 evaluation steps; write fewer nodes at once"))
    }
}
