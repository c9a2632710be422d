import HearthJSON
@testable import HearthRules
import Testing

/// Rules coverage: sites, spans and counts of a rule set compiled with probes
/// (docs/rules.md, "Coverage").
@Suite struct CoverageTests {
    static func covered(_ text: String, limits: RuleLimits = RuleLimits()) -> RuleSet {
        do {
            return try RuleSet.compile(text, limits: limits, coverage: true)
        } catch {
            fatalError("rules did not compile: \(error)")
        }
    }

    /// The counts of the one site whose text is `text` (in `rule`, if given), by result name.
    static func counts(_ rules: RuleSet, _ text: String, rule: String? = nil) -> [String: UInt32] {
        let report = CoverageReport(rules.coverage!)
        let matching = report.entries.filter { $0.site.text == text && (rule == nil || $0.site.rule == rule) }
        #expect(matching.count == 1, "sites with text \(text): \(matching.count)")
        guard let entry = matching.first else { return [:] }
        var result: [String: UInt32] = [:]
        for kind in CoverageResult.allCases where entry.counts[kind.rawValue] > 0 { result[kind.name] = entry.counts[kind.rawValue] }
        return result
    }

    static func write(_ rules: RuleSet, _ target: String, _ value: JSONValue, uid: String?, data: JSONValue? = nil) -> RuleDecision {
        rules.canWrite([(path(target), value)], data: JSONTreeSource(data), auth: auth(uid), now: testNow)
    }

    @Test func subExpressionSpansPointIntoTheFile() throws {
        let text = """
        {"rules": {"users": {"$uid": {
          ".write": "auth != null &&\\n  auth.uid == $uid",
          ".read": "data.child(\\"a\\").exists()"
        }}}}
        """
        let rules = Self.covered(text)
        let sites = try #require(rules.coverage).sites
        let bytes = Array(text.utf8)
        func written(_ site: CoverageSite) -> String { String(decoding: bytes[site.start..<site.end], as: UTF8.self) }
        let byText = Dictionary(sites.map { ($0.text, $0) }, uniquingKeysWith: { first, _ in first })
        let uid = try #require(byText["auth.uid"])
        #expect(written(uid) == "auth.uid")
        #expect(uid.line == 2 && uid.column == 33, "\(uid.line):\(uid.column)")
        #expect(uid.rule == "/rules/users/$uid/.write" && uid.kind == .write && uid.path == "/users/$uid")
        let whole = try #require(sites.first { $0.rule == "/rules/users/$uid/.write" && $0.isWholeRule })
        #expect(whole.text == "auth != null &&\n  auth.uid == $uid")
        #expect(written(whole) == "auth != null &&\\n  auth.uid == $uid")
        let escaped = try #require(byText["\"a\""])
        #expect(written(escaped) == "\\\"a\\\"")
        #expect(sites.map(\.text).contains("data.child(\"a\").exists()"))
        // Every node the author wrote is a site, outer first: `auth != null && ...`,
        // `auth != null`, `auth`, `null`, `auth.uid == $uid`, `auth.uid`, `auth`, `$uid`.
        #expect(sites.filter { $0.rule.hasSuffix(".write") }.map(\.text) ==
                ["auth != null &&\n  auth.uid == $uid", "auth != null", "auth", "null", "auth.uid == $uid", "auth.uid", "auth", "$uid"])
    }

    @Test func countsByResultForLiteralsAndValueKinds() {
        let rules = Self.covered(#"{"rules": {"a": {".read": "auth.uid.length > 2 || auth.token.admin == true || false"}}}"#)
        _ = rules.canRead(path("a"), data: JSONTreeSource(nil), auth: auth("alice"), now: testNow, query: nil)
        _ = rules.canRead(path("a"), data: JSONTreeSource(nil), auth: auth("al"), now: testNow, query: nil)
        #expect(Self.counts(rules, "auth.uid.length > 2") == ["true": 1, "false": 1])
        #expect(Self.counts(rules, "auth.uid.length") == ["number": 2])
        #expect(Self.counts(rules, "auth.uid") == ["string": 2])
        #expect(Self.counts(rules, "2") == ["number": 2])
        #expect(Self.counts(rules, "auth.token.admin") == ["null": 1])
        #expect(Self.counts(rules, "auth.token") == ["object": 1])
        #expect(Self.counts(rules, "true") == ["true": 1])
        #expect(Self.counts(rules, "false") == ["false": 1])
    }

    @Test func neverEvaluatedRuleShowsZero() {
        let rules = Self.covered(#"{"rules": {"a": {".read": true}, "b": {".read": "auth != null"}}}"#)
        _ = rules.canRead(path("a"), data: JSONTreeSource(nil), auth: .null, now: testNow, query: nil)
        let report = CoverageReport(rules.coverage!)
        let b = report.entries.filter { $0.site.rule == "/rules/b/.read" }
        #expect(b.count == 3 && b.allSatisfy { $0.evaluations == 0 && $0.level == .none })
        #expect(Self.counts(rules, "true", rule: "/rules/a/.read") == ["true": 1])
        #expect(report.evaluatedCount == 1 && report.percent == 25)
    }

    @Test func deniedWriteShowsItsSubExpressionsFalse() {
        let rules = Self.covered(#"{"rules": {"users": {"$uid": {".write": "auth != null && auth.uid == $uid"}}}}"#)
        let decision = Self.write(rules, "users/bob", "x", uid: "alice")
        #expect(!decision.allowed)
        #expect(Self.counts(rules, "auth != null && auth.uid == $uid") == ["false": 1])
        #expect(Self.counts(rules, "auth.uid == $uid") == ["false": 1])
        #expect(Self.counts(rules, "auth != null") == ["true": 1])
        #expect(Self.counts(rules, "$uid") == ["string": 1])
    }

    @Test func runtimeErrorsAreCounted() {
        let rules = Self.covered(#"{"rules": {".read": "auth.uid.length > 0"}}"#)
        let decision = rules.canRead(path(""), data: JSONTreeSource(nil), auth: .null, now: testNow, query: nil)
        #expect(!decision.allowed)
        #expect(Self.counts(rules, "auth.uid.length > 0") == ["error": 1])
        #expect(Self.counts(rules, "auth.uid.length") == ["error": 1])
        #expect(Self.counts(rules, "auth.uid") == ["null": 1])
        #expect(Self.counts(rules, "auth") == ["null": 1])
        #expect(Self.counts(rules, "0").isEmpty)
    }

    @Test func validateAndIndexOnSitesAreCounted() {
        let rules = Self.covered(#"{"rules": {"s": {".write": true, ".indexOn": ["score", ".value"], "$k": {".validate": "newData.isNumber()"}}}}"#)
        _ = Self.write(rules, "s", .object(["a": 1, "b": "x"]), uid: nil)
        rules.recordIndexUse("score", at: path("s"))
        rules.recordIndexUse("missing", at: path("s"))
        // The validation stops at the first failing child, in any order: one false, at
        // most one true.
        let validated = Self.counts(rules, "newData.isNumber()")
        #expect(validated["false"] == 1 && (validated["true"] ?? 0) <= 1)
        #expect(Self.counts(rules, "score") == ["used": 1])
        #expect(Self.counts(rules, ".value").isEmpty)
        #expect(Self.counts(rules, "true") == ["true": 1])
    }

    @Test func siteLimitCrossedRefusesCoverageOnly() throws {
        #expect(RuleLimits.defaultMaxCoverageSites == 50_000)
        let text = #"{"rules": {".read": "auth != null"}}"#
        // Three sites: the rule, `auth`, `null`.
        let limit = RuleLimits(maxCoverageSites: 3)
        #expect(try RuleSet.compile(text, limits: limit, coverage: true).coverage?.sites.count == 3)
        let over = RuleLimits(maxCoverageSites: 2)
        #expect(throws: RulesCompileError.self) { try RuleSet.compile(text, limits: over, coverage: true) }
        do {
            _ = try RuleSet.compile(text, limits: over, coverage: true)
        } catch {
            #expect(error.description.contains("more than the 2 coverage can record"))
        }
        #expect(try RuleSet.compile(text, limits: over).coverage == nil)
        #expect(throws: RulesCompileError.self) { try RuleSet.compile(text, limits: over).withCoverage() }
    }

    @Test func pendingHitsLimitCrossedFlushesEarlyWithoutLosingHits() {
        let rules = Self.covered(#"{"rules": {"s": {".write": true, "$k": {".validate": "newData.isNumber()"}}}}"#)
        let children = PendingHits.maxPendingHits / 2 + 1
        var value: [JSONKey: JSONValue] = [:]
        for index in 0..<children { value[JSONKey("k\(index)")] = .int(Int64(index)) }
        #expect(Self.write(rules, "s", .object(value), uid: nil).allowed)
        // Two hits a child plus the `.write`: one early flush, one when the decision ends.
        #expect(rules.coverage?.flushCount == 2)
        #expect(Self.counts(rules, "newData.isNumber()") == ["true": UInt32(children)])
        #expect(Self.counts(rules, "newData") == ["snapshot": UInt32(children)])
        _ = Self.write(rules, "s", .object(["a": 1]), uid: nil)
        #expect(rules.coverage?.flushCount == 3)
    }

    @Test func plainCompileHasNoProbesAndProbesChangeNoDecision() throws {
        let plain = compile(#"{"rules": {".read": "auth != null", ".write": true}}"#)
        #expect(plain.coverage == nil)
        #expect(plain.canWriteWithoutData([(path("a"), 1)], auth: .null)?.allowed == true)
        let probed = try plain.withCoverage()
        #expect(probed.canWriteWithoutData([(path("a"), 1)], auth: .null)?.allowed == true)
        for rule in [plain.root.read, plain.root.write] {
            if case .expression(let ir)? = rule?.body { #expect(!Self.hasProbe(ir)) }
            #expect(rule?.site == nil)
        }
        if case .expression(let ir)? = probed.root.read?.body { #expect(Self.hasProbe(ir)) } else { Issue.record("no probed .read") }
        #expect(probed.root.write?.site != nil)
        // Every conformance case decides the same, explanation and all, with probes.
        for testCase in Fixtures.cases {
            let compiled: (RuleSet, RuleSet)
            switch testCase.rules {
            case .text(let text): compiled = (try RuleSet.compile(text), try RuleSet.compile(text, coverage: true))
            case .json(let json): compiled = (try RuleSet.compile(json: json), try RuleSet.compile(json: json, coverage: true))
            }
            let expected = try testCase.decide(with: compiled.0, explain: true)
            #expect(try testCase.decide(with: compiled.1, explain: true) == expected, "\(testCase.id)")
        }
    }

    /// Decisions made without the data count only when their caller uses them: an allowed
    /// one (it asks nothing more); otherwise it decides again with the data, and that counts.
    @Test func decisionsWithoutDataCountOnlyWhenUsed() {
        let rules = Self.covered(#"{"rules": {"open": {".read": "auth == null", ".write": "auth == null"}, "owned": {".read": "data.exists()", ".write": "!data.exists()"}}}"#)
        #expect(rules.readAllowedWithoutData(path("open"), auth: .null, now: testNow))
        #expect(!rules.readAllowedWithoutData(path("open"), auth: auth("alice"), now: testNow))
        #expect(!rules.readAllowedWithoutData(path("owned"), auth: .null, now: testNow))
        #expect(Self.counts(rules, "auth == null", rule: "/rules/open/.read") == ["true": 1])
        #expect(Self.counts(rules, "data.exists()", rule: "/rules/owned/.read").isEmpty)
        #expect(rules.canWriteWithoutData([(path("open"), 1)], auth: .null)?.allowed == true)
        #expect(rules.canWriteWithoutData([(path("open"), 1)], auth: auth("alice"))?.allowed == false)
        #expect(rules.canWriteWithoutData([(path("owned"), 1)], auth: .null) == nil)
        #expect(Self.counts(rules, "auth == null", rule: "/rules/open/.write") == ["true": 1])
        #expect(Self.counts(rules, "!data.exists()", rule: "/rules/owned/.write").isEmpty)
    }

    /// A deferred buffer never flushes early: past the limit it stops, and the decision
    /// made without data is thrown away (decided again with the data, counted then).
    @Test func aDecisionWithoutDataPastThePendingLimitIsNotUsed() {
        let rules = Self.covered(#"{"rules": {"s": {".write": true, "$k": {".validate": "newData.isNumber()"}}}}"#)
        var value: [JSONKey: JSONValue] = [:]
        for index in 0..<(PendingHits.maxPendingHits / 2 + 1) { value[JSONKey("k\(index)")] = .int(Int64(index)) }
        #expect(rules.canWriteWithoutData([(path("s"), .object(value))], auth: .null) == nil)
        #expect(rules.coverage?.flushCount == 0)
        #expect(Self.counts(rules, "newData.isNumber()").isEmpty)
        var small: [JSONKey: JSONValue] = [:]
        for index in 0..<(PendingHits.maxPendingHits / 2 - 1) { small[JSONKey("k\(index)")] = .int(Int64(index)) }
        #expect(rules.canWriteWithoutData([(path("s"), .object(small))], auth: .null)?.allowed == true)
        #expect(rules.coverage?.flushCount == 1)
    }

    @Test func longTextsAreCutInTheReportAtTheLimit() throws {
        let long = Array(repeating: "auth.uid == 'é'", count: 20).joined(separator: " || ")
        let rules = Self.covered(#"{"rules": {".read": "\#(long)"}}"#)
        let report = CoverageReport(try #require(rules.coverage))
        guard case .array(let expressions)? = report.json.objectValue?["expressions"],
              case .string(let whole)? = expressions.first?.objectValue?["text"] else {
            Issue.record("no expressions")
            return
        }
        #expect(long.utf8.count > CoverageReport.maxTextBytes)
        #expect(whole.utf8.count <= CoverageReport.maxTextBytes && whole.hasSuffix("…") && long.hasPrefix(String(whole.dropLast())))
        let exact = String(repeating: "a", count: CoverageReport.maxTextBytes)
        #expect(CoverageReport.shortened(exact) == exact)
        #expect(CoverageReport.shortened(exact + "b").utf8.count == CoverageReport.maxTextBytes)
    }

    /// Whether `ir` holds a probe anywhere (the renumbering visits every one).
    static func hasProbe(_ ir: IR) -> Bool {
        var probes = 0
        _ = ir.renumberingProbes { number in
            probes += 1
            return number
        }
        return probes > 0
    }
}
