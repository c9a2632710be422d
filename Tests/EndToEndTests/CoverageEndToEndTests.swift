import Foundation
import Testing

/// Rules coverage end to end (docs/rules.md, "Coverage"): a rules test suite run as
/// `@firebase/rules-unit-testing` runs it against the emulator (`Python/coverage_client.py`
/// suite, over the wire protocol), then `/.inspect/coverage.json` has its counts and the
/// HTML page shows them in headless Chromium (`Python/coverage_browser.py`, which takes the
/// screenshot of docs/rules.md); and `hearth rules test --coverage --min-coverage`.
@Suite struct CoverageEndToEndTests {
    static let namespace = "demo-cov"

    /// The counts of the one expression `text` of `rule` in a coverage.json body.
    static func counts(_ report: [String: Any], rule: String, text: String) -> [String: Int] {
        let expressions = (report["expressions"] as? [[String: Any]] ?? []).filter {
            $0["rule"] as? String == rule && $0["text"] as? String == text
        }
        guard expressions.count == 1, let counts = expressions[0]["counts"] as? [String: Int] else { return ["sites": expressions.count] }
        return counts.filter { $0.value > 0 }
    }

    @Test func aRulesSuiteThenTheReportAsJSONAndInChromium() throws {
        let python = try pythonInterpreter()
        let dir = TemporaryDirectory(), profile = TemporaryDirectory()
        let server = try HearthProcess.serve(dataDirectory: dir.path, rules: #"{"rules": {".read": false, ".write": false}}"#,
                                             options: ["--accept-emulator-owner"])
        let suite = try runPythonDriver(python, script: "coverage_client.py", arguments: ["suite", String(server.port)], environment: [:])
        #expect(suite.status == 0 && suite.stdout.hasSuffix("done\n"), "\(suite.stdout)\n\(suite.stderr)")

        let answer = try curl("GET", server.baseURL + "/.inspect/coverage.json?ns=\(Self.namespace)")
        #expect(answer.status == 200 && answer.headers["content-type"] == "application/json; charset=utf-8", "\(answer)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any])
        // Never exercised: every expression of /admin's rule shows 0.
        for text in ["auth.token.admin === true", "auth.token.admin", "auth.token", "auth", "true"] {
            #expect(Self.counts(report, rule: "/rules/admin/.read", text: text).isEmpty, "\(text)")
        }
        // The denied write (alice on bob's record) shows false where it failed.
        let write = "/rules/users/$uid/.write"
        #expect(Self.counts(report, rule: write, text: "auth != null && auth.uid == $uid") == ["true": 1, "false": 1])
        #expect(Self.counts(report, rule: write, text: "auth.uid == $uid") == ["true": 1, "false": 1])
        #expect(Self.counts(report, rule: write, text: "auth != null") == ["true": 2])
        #expect(Self.counts(report, rule: write, text: "$uid") == ["string": 2])
        // The guest's read: false at `auth != null`, and the rest never reached.
        let read = "/rules/users/$uid/.read"
        #expect(Self.counts(report, rule: read, text: "auth != null") == ["true": 1, "false": 1])
        #expect(Self.counts(report, rule: read, text: "auth.uid == $uid") == ["true": 1])
        #expect(Self.counts(report, rule: "/rules/users/$uid/.validate", text: "newData.hasChildren(['name'])") == ["true": 1])
        #expect(Self.counts(report, rule: "/rules/users/$uid/.validate", text: "'name'") == ["string": 1])

        let screenshot = ProcessInfo.processInfo.environment["HEARTH_UPDATE_SCREENSHOTS"] != nil
            ? URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../docs/rules-coverage.png").standardized.path
            : profile.path + "/rules-coverage.png"
        let browser = try runPythonDriver(python, script: "coverage_browser.py",
                                          arguments: [server.baseURL, Self.namespace, profile.path + "/chromium", screenshot], environment: [:])
        for check in ["spans_coloured_by_coverage", "hover_shows_counts", "summary_percent", "no_policy_violations", "screenshot"] {
            #expect(browser.stdout.contains(#"{"name": "\#(check)", "ok": true"#), "\(check)\n\(browser.stdout)\n\(browser.stderr.suffix(2000))")
        }
        #expect(browser.status == 0 && browser.stdout.hasSuffix("done\n"), "\(browser.stdout)\n\(browser.stderr.suffix(2000))")
        #expect(FileManager.default.fileExists(atPath: screenshot))
        server.signal(SIGTERM)
        #expect(try server.waitForExit() == 0)
    }

    @Test func rulesTestWritesTheReportAndFailsUnderTheMinimum() throws {
        let dir = TemporaryDirectory()
        let rules = dir.path + "/database.rules.json", cases = dir.path + "/cases.json"
        try """
            {
              // the same rules as the emulator suite's
              "rules": {
                "users": {"$uid": {".read": "auth != null && auth.uid == $uid", ".write": "auth != null && auth.uid == $uid"}},
                "admin": {".read": "auth.token.admin === true"}
              }
            }
            """.write(toFile: rules, atomically: true, encoding: .utf8)
        try """
            [{"id": "own record", "auth": {"uid": "alice"}, "path": "/users/alice", "op": "read", "expect": "allow"},
             {"id": "not bob's", "auth": {"uid": "alice"}, "path": "/users/bob", "op": "set", "value": 1, "expect": "deny"}]
            """.write(toFile: cases, atomically: true, encoding: .utf8)
        let json = dir.path + "/coverage.json", html = dir.path + "/coverage.html"
        let passing = try runHearth(["rules", "test", cases, "--rules", rules, "--coverage", json, "--min-coverage", "75"])
        #expect(passing.status == 0, "\(passing)")
        // 16 of the 21 expressions: all of /users' rules, nothing of /admin's.
        #expect(passing.output.contains("2 passed, 0 failed\nrules coverage: 16 of 21 expressions evaluated (76.2 %)\n"), "\(passing.output)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: json))) as? [String: Any])
        #expect(Self.counts(report, rule: "/rules/users/$uid/.write", text: "auth.uid == $uid") == ["false": 1])
        #expect(Self.counts(report, rule: "/rules/admin/.read", text: "auth.token.admin === true").isEmpty)
        #expect(report["percent"] as? Double == 76.2)

        let failing = try runHearth(["rules", "test", cases, "--rules", rules, "--coverage", html, "--min-coverage", "80"])
        #expect(failing.status == 1, "\(failing)")
        #expect(failing.output.contains("rules coverage 76.2 % is below --min-coverage 80\n"), "\(failing.output)")
        let page = try String(contentsOfFile: html, encoding: .utf8)
        #expect(page.contains("<style>") && page.contains(#"<span class="cov cov-none""#) && !page.contains("<script"))

        let noRules = try runHearth(["rules", "test", cases, "--coverage", json])
        #expect(noRules.status == 64 && noRules.error.contains("--coverage and --min-coverage need --rules FILE"), "\(noRules)")
    }
}
