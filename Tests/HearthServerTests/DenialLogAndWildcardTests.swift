import HearthJSON
import HearthRules
import HearthTesting
import Logging
import Testing
@testable import HearthServer

/// Two details that had no test of their own: the info-level log line of a
/// failed `.validate`, and a rules `$wildcard` capturing keys by their exact code units.
@Suite struct DenialLogAndWildcardTests {
    func favorite(_ id: String, by uid: String) -> String {
        #"{"id":"\#(id)","name":"Oslo","createdAt":1700000000000,"createdBy":"\#(uid)","latitude":59.9,"longitude":10.7}"#
    }

    @Test func aFailedValidateIsLoggedAtInfoWithTheRule() async throws {
        let logs = CapturedLogs()
        var logger = Logger(label: "t", factory: logs.handler)
        logger.logLevel = .info
        let policy = RulesAccessPolicy(rules: try RuleSet.compile(ReferenceRules.text), logger: logger)
        let h = try RouterHarness(policy: policy)
        let bad = await h.send("PUT", "/users/alice/favorites/f1.json", favorite("f1", by: "mallory"), headers: try h.bearer("alice"))
        #expect(bad.status == 401)
        let line = logs.lines.withLock { $0.first { $0.message.hasPrefix("write denied: ") } }
        #expect(line?.message.contains("/users/alice/favorites/f1") == true, "\(logs.all)")
        #expect(line?.message.contains(".validate") == true, "\(logs.all)")
    }

    /// `$k` holds the key's exact code units: a canonically equivalent twin is another key.
    @Test func aWildcardCapturesTheExactCodeUnits() async throws {
        let rules = #"{"rules": {"$k": {".read": true, ".write": "$k === 'caf\u00e9'"}}}"#
        let h = try RouterHarness(policy: RulesAccessPolicy(rules: try RuleSet.compile(rules)))
        #expect(await h.send("PUT", "/caf%C3%A9.json", "1").status == 200)          // caf\u00e9
        #expect(await h.send("PUT", "/cafe%CC%81.json", "2").status == 401)         // cafe\u0301
        #expect(await h.send("GET", "/cafe%CC%81.json").text == "null")
        #expect(await h.send("GET", "/caf%C3%A9.json").text == "1")
    }
}
