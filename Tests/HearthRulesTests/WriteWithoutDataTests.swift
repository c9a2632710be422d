import HearthJSON
@testable import HearthRules
import Testing

/// `canWriteWithoutData`: a write decided before it queues for the writer must
/// get the answer the writer would give on any data, and a rule that needs the data or
/// the clock must leave the decision to the writer.
@Suite struct WriteWithoutDataTests {
    /// The case's writes as the server would hand them to the rules, or nil for a read or a
    /// write holding server values (those are resolved on the writer, never decided early).
    static func writes(of testCase: ConformanceCase) throws -> [(path: DataPath, value: JSONValue?)]? {
        let target = try DataPath(string: testCase.path)
        switch testCase.operation {
        case .read:
            return nil
        case .set(let value):
            guard ServerValues.resolve(value, now: 0) == value else { return nil }
            return [(target, try FirebaseTree.normalize(value, at: target))]
        case .update(let updates):
            guard ServerValues.resolve(updates, now: 0) == updates else { return nil }
            return try MultiPathUpdate.parse(base: target, body: updates)
        }
    }

    /// Every write case of the conformance corpus: when decided without data, the decision
    /// is the corpus's expected one (made with the case's data), and the same as on an
    /// empty database.
    @Test func everyCorpusWriteDecidedWithoutDataMatchesTheDecisionWithIt() throws {
        var decided = 0
        var deferred = 0
        for testCase in Fixtures.cases {
            guard let writes = try? Self.writes(of: testCase) else { continue }
            let ruleSet: RuleSet
            switch testCase.rules {
            case .text(let text): ruleSet = try RuleSet.compile(text)
            case .json(let json): ruleSet = try RuleSet.compile(json: json)
            }
            guard let early = ruleSet.canWriteWithoutData(writes, auth: testCase.auth) else {
                deferred += 1
                continue
            }
            decided += 1
            #expect(early.allowed == testCase.expectAllowed, "\(testCase.id): \(early.explanation)")
            let onEmpty = ruleSet.canWrite(writes, data: JSONTreeSource(.null), auth: testCase.auth, now: testCase.now)
            #expect(early.allowed == onEmpty.allowed, "\(testCase.id)")
        }
        // Both kinds are in the corpus, so neither branch above is vacuous.
        #expect(decided > 50)
        #expect(deferred > 50)
    }

    /// The repository's reference rules (the weather app's favourites): a create is decided
    /// from `auth`, `$uid` and the written value alone.
    static let reference = """
        {"rules": {"users": {"$uid": {"favorites": {
          ".read": "auth != null && auth.uid == $uid",
          ".write": "auth != null && auth.uid == $uid",
          ".indexOn": ["createdAt"],
          "$favoriteId": {
            ".validate": "newData.hasChildren(['id', 'name', 'createdAt', 'createdBy', 'latitude', 'longitude']) && newData.child('createdBy').val() == auth.uid"
          }}}}}}
        """

    static func favourite(by uid: String) -> JSONValue {
        .object(["id": .string("f1"), "name": .string("Berlin"), "createdAt": .int(1), "createdBy": .string(uid),
                 "latitude": .double(52.5), "longitude": .double(13.4)])
    }

    @Test func aReferenceCreateIsDecidedWithoutData() throws {
        let rules = compile(Self.reference)
        let target = path("users/alice/favorites/-N1")
        let allowed = rules.canWriteWithoutData([(target, Self.favourite(by: "alice"))], auth: auth("alice"))
        #expect(allowed?.allowed == true)
        // The validation fails on the written value alone: decided too, denied.
        let forged = rules.canWriteWithoutData([(target, Self.favourite(by: "mallory"))], auth: auth("alice"))
        #expect(forged?.allowed == false)
        // Not granted: another user's favourites.
        #expect(rules.canWriteWithoutData([(target, Self.favourite(by: "bob"))], auth: auth("bob"))?.allowed == false)
    }

    @Test(arguments: [
        // each reads the stored tree or the clock
        #"{"rules": {"x": {".write": "!data.exists()"}}}"#,
        #"{"rules": {"x": {".write": "root.child('open').val() == true"}}}"#,
        #"{"rules": {"x": {".write": "auth != null", ".validate": "newData.val() <= now"}}}"#,
        #"{"rules": {"x": {".write": true, ".validate": "newData.parent().child('y').exists() || true"}}}"#,
    ])
    func aRuleThatReadsStoredDataOrTheClockLeavesTheDecisionToTheWriter(_ text: String) {
        let rules = compile(text)
        #expect(rules.canWriteWithoutData([(path("x"), .int(5))], auth: auth("alice")) == nil)
        // The writer's decision is still made, with the data.
        let stored = JSONTreeSource(.object(["open": .bool(true), "y": .int(1)]))
        #expect(rules.canWrite([(path("x"), .int(5))], data: stored, auth: auth("alice"), now: 10).allowed)
    }

    @Test func anUpdateWhoseValidationReadsAnUnwrittenSiblingIsLeftToTheWriter() {
        let rules = compile(#"{"rules": {"p": {".write": true, "a": {".validate": "newData.parent().child('b').val() == 1"}}}}"#)
        // `b` is not written: newData's `b` is the stored one.
        #expect(rules.canWriteWithoutData([(path("p/a"), .int(1))], auth: .null) == nil)
        // Written in the same update: decided without data.
        #expect(rules.canWriteWithoutData([(path("p/a"), .int(1)), (path("p/b"), .int(1))], auth: .null)?.allowed == true)
    }

    @Test func aDeleteUnderAValidatedParentIsLeftToTheWriter() {
        // Whether `p` still exists after the delete depends on its other children.
        let rules = compile(#"{"rules": {"p": {".write": true, ".validate": "newData.hasChild('keep')"}}}"#)
        #expect(rules.canWriteWithoutData([(path("p/x"), nil)], auth: .null) == nil)
    }
}

/// `hasChildren([...])` on `newData` where the write replaced the node reads the node once
/// (`RuleDataSource.valueInMemory`): the same answers as one `hasChild` per name.
@Suite struct HasChildrenInMemoryTests {
    static let names = ["a", "b", "c.d", "e/f", "", "$x"]

    @Test(arguments: [
        JSONValue.object(["a": .int(1), "b": .string("x")]),
        .object(["a": .int(1)]),
        .object(["a": .int(1), "b": .object(["z": .bool(true)]), "e": .object(["f": .int(2)])]),
        .int(5),
        .object(["b": .int(1), "c": .object(["d": .int(1)])]),
    ])
    func answersMatchOneLookupPerName(_ value: JSONValue) {
        for count in 1...Self.names.count {
            for start in 0..<Self.names.count {
                let chosen = (0..<count).map { Self.names[(start + $0) % Self.names.count] }
                let list = chosen.map { "'\($0)'" }.joined(separator: ", ")
                let each = chosen.map { "newData.hasChild('\($0)')" }.joined(separator: " && ")
                let together = compile(#"{"rules": {"p": {".write": "newData.hasChildren([\#(list)])"}}}"#)
                let oneByOne = compile(#"{"rules": {"p": {".write": "\#(each)"}}}"#)
                let data = JSONTreeSource(.object(["p": .object(["a": .int(9), "b": .int(9)])]))
                let fast = together.canWrite([(path("p"), value)], data: data, auth: .null, now: 0)
                let slow = oneByOne.canWrite([(path("p"), value)], data: data, auth: .null, now: 0)
                #expect(fast.allowed == slow.allowed, "\(chosen) on \(value)")
                // Below the written node, the stored data is what counts: no shortcut there.
                let update = together.canWrite([(path("p/b"), .int(1))], data: data, auth: .null, now: 0)
                let updateSlow = oneByOne.canWrite([(path("p/b"), .int(1))], data: data, auth: .null, now: 0)
                #expect(update.allowed == updateSlow.allowed, "\(chosen) after an update")
            }
        }
    }
}
