import HearthJSON
import HearthRules
import Testing

/// `RuleDecision.dependsOnDataOrTime`: streams re-check only decisions that could change
/// with the data or the clock.
@Suite struct DependenceTests {
    let data = JSONTreeSource(.object(["rooms": .object(["r": .object(["public": .bool(true)])])]))
    let auth: JSONValue = .object(["uid": .string("u1"), "provider": .string("anonymous"), "token": .object([JSONKey: JSONValue]())])

    func decide(_ rule: String, at path: String = "rooms/r", auth: JSONValue? = nil) throws -> RuleDecision {
        let rules = try RuleSet.compile(#"{"rules": {"rooms": {"$room": {".read": "\#(rule)"}}}}"#)
        return rules.canRead(try DataPath(string: path), data: data, auth: auth ?? self.auth, now: 1_000, query: nil)
    }

    @Test func authOnlyDecisionsDoNotDependOnData() throws {
        let decision = try decide("auth != null && auth.uid == 'u1' && $room == 'r'")
        #expect(decision.allowed && !decision.dependsOnDataOrTime)
        let denied = try decide("auth.uid == 'other'")
        #expect(!denied.allowed && !denied.dependsOnDataOrTime)
    }

    @Test func readingDataRootOrNowMakesADecisionDependent() throws {
        #expect(try decide("data.child('public').val() == true").dependsOnDataOrTime)
        #expect(try decide("root.child('rooms').exists()").dependsOnDataOrTime)
        #expect(try decide("now > 0").dependsOnDataOrTime)
    }

    @Test func onlyTheRulesActuallyEvaluatedCount() throws {
        // Short-circuit: with a signed-in caller the data half is never evaluated.
        #expect(try !decide("auth != null || data.exists()").dependsOnDataOrTime)
        #expect(try decide("auth != null || data.exists()", auth: .null).dependsOnDataOrTime)
        // Constant rules read nothing.
        let rules = try RuleSet.compile(#"{"rules": {".read": true}}"#)
        #expect(!rules.canRead(.root, data: data, auth: .null, now: 0, query: nil).dependsOnDataOrTime)
    }
}
