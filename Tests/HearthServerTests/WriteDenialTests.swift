import HearthHTTP
import HearthJSON
import HearthRules
import HearthStore
import HearthTesting
import Testing
@testable import HearthServer

/// What a refused write says: a failed `.validate` keeps Firebase's 401
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
        #expect(detail == ".validate failed at /users/alice/favorites/f1: the check of field 'createdBy' failed (rule /rules/users/$uid/favorites/$favoriteId/.validate)")
        // Missing fields are named, each once, from the written data.
        let partial = await h.send("PUT", "/users/alice/favorites/f3.json", #"{"id":"f3","name":"Oslo","createdAt":1,"createdBy":"alice"}"#,
                                   headers: try h.bearer("alice"))
        #expect(partial.status == 401)
        #expect(members(partial)["detail"]?.stringValue == ".validate failed at /users/alice/favorites/f3: missing fields 'latitude', 'longitude' (rule /rules/users/$uid/favorites/$favoriteId/.validate)")
        let one = await h.send("PUT", "/users/alice/favorites/f4.json", #"{"id":"f4","name":"Oslo","createdBy":"alice","latitude":1,"longitude":2}"#,
                               headers: try h.bearer("alice"))
        #expect(members(one)["detail"]?.stringValue == ".validate failed at /users/alice/favorites/f4: missing field 'createdAt' (rule /rules/users/$uid/favorites/$favoriteId/.validate)")
        // A missing grant says nothing more than Firebase does.
        let stranger = await h.send("PUT", "/users/alice/favorites/f2.json", favorite("f2", by: "bob"), headers: try h.bearer("bob"))
        #expect(stranger.status == 401)
        #expect(stranger.text == #"{"error":"Permission denied"}"#)
    }

    @Test func aWriteTooLargeToValidateIs413NotPermissionDenied() async throws {
        // 50,000 valid favourites (a huge but valid write): the reference rules' checks run
        // out of the default evaluation budget (`RuleLimits.defaultMaxEvaluationSteps`).
        // They are 300,000 nodes, past the store's default `maxNodesPerWrite`, which would
        // refuse them first (WriteSizeLimitTests): raised here so the rules' budget is what
        // is crossed.
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

    /// The reason names only the written data: a rule that compares with stored data says
    /// which written field failed, never what is stored; one over stored data alone, and a
    /// constant false, add no reason; past `maxReasonFields` the rest are counted.
    @Test func theReasonNamesWrittenFieldsOnly() async throws {
        let fields = (0..<10).map { "'f\($0)'" }.joined(separator: ", ")
        let rules = #"{"rules": {".read": false, ".write": true, "s": {".validate": "newData.child('pin').val() == root.child('secret').val()"}, "#
            + #""t": {".validate": "!root.child('secret').exists()"}, "f": {".validate": false}, "#
            + #""m": {".validate": "newData.hasChildren([\#(fields)])"}}}"#
        let h = try RouterHarness(policy: RulesAccessPolicy(rules: try RuleSet.compile(rules)))
        #expect(await h.send("PUT", "/secret.json", #""1234""#).status == 200)
        let guess = await h.send("PUT", "/s.json", #"{"pin":"0000"}"#)
        #expect(members(guess)["detail"]?.stringValue == ".validate failed at /s: the check of field 'pin' failed (rule /rules/s/.validate)")
        #expect(!(guess.text.contains("1234")))
        let stored = await h.send("PUT", "/t.json", "1")
        #expect(members(stored)["detail"]?.stringValue == ".validate failed at /t (rule /rules/t/.validate)")
        #expect(members(await h.send("PUT", "/f.json", "1"))["detail"]?.stringValue == ".validate failed at /f (rule /rules/f/.validate)")
        let many = await h.send("PUT", "/m.json", #"{"f0":1}"#)
        #expect(members(many)["detail"]?.stringValue == ".validate failed at /m: missing fields 'f1', 'f2', 'f3', 'f4', 'f5', 'f6', 'f7', 'f8' and 1 more (rule /rules/m/.validate)")
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
