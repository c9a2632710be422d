import HearthJSON
import HearthRules
@testable import HearthServer
import Testing

/// The coverage page from literals: nesting, escaping, hover text and the two style modes;
/// the setting that turns recording on.
@Suite struct CoveragePageTests {
    @Test func spansNestAndTheTextIsEscaped() throws {
        let text = #"{"rules": {"a": {".read": "auth.uid < '<b>' || true"}}}"#
        let rules = try RuleSet.compile(text, coverage: true)
        _ = rules.canRead(try DataPath(string: "a"), data: JSONTreeSource(nil), auth: .null, now: 0, query: nil)
        let page = CoveragePage.html(CoverageReport(try #require(rules.coverage)), title: "T <1>", styles: .linked(CoveragePage.stylesheetPath))
        #expect(page.contains("<title>T &lt;1&gt;</title>") && page.contains(#"<link rel="stylesheet" href="/.inspect/coverage.css">"#))
        #expect(!page.contains("<b>") && page.contains("&#39;&lt;b&gt;&#39;"))
        // Signed out, `auth.uid` is null and `null < '<b>'` a runtime error, which fails the
        // whole rule; `true` is never reached.
        #expect(page.components(separatedBy: #"title="/rules/a/.read — evaluated 1 time: error 1">"#).count - 1 == 2)
        #expect(page.contains(#"title="/rules/a/.read — evaluated 1 time: null 1"><span class="cov cov-full" data-site="3""#))
        #expect(page.contains(#"title="/rules/a/.read — evaluated 1 time: string 1">&#39;&lt;b&gt;&#39;"#))
        #expect(page.contains(#"<span class="cov cov-none" data-site="5" title="/rules/a/.read — never evaluated">true</span>"#))
        // One span a site, every one closed, and the file's text unchanged between them.
        #expect(page.components(separatedBy: "<span class=\"cov ").count - 1 == 6)
        let pre = try #require(page.range(of: "<pre class=\"rules\">")).upperBound
        let end = try #require(page.range(of: "</pre>")).lowerBound
        let inside = String(page[pre..<end])
        #expect(inside.components(separatedBy: "<span").count == inside.components(separatedBy: "</span>").count)
        #expect(inside.replacingOccurrences(of: #"<span[^>]*>"#, with: "", options: .regularExpression)
                    .replacingOccurrences(of: "</span>", with: "")
                    .replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
                    .replacingOccurrences(of: "&#39;", with: "'").replacingOccurrences(of: "&quot;", with: "\"") == text)
    }

    @Test func aFileReportCarriesItsStylesInline() throws {
        let rules = try RuleSet.compile(#"{"rules": {".read": true}}"#, coverage: true)
        let page = CoveragePage.html(CoverageReport(try #require(rules.coverage)), title: "t", styles: .inline)
        #expect(page.contains("<style>") && page.contains(".cov-none") && !page.contains("<link"))
        #expect(page.contains("0 of 1 expressions evaluated (0.0 %)"))
    }

    /// `recordRulesCoverage` from the environment or the config file; emulator mode records
    /// whatever it says.
    @Test func recordingFollowsTheSettingAndEmulatorMode() throws {
        func resolve(_ env: [String: String], file: String? = nil) throws -> HearthConfiguration {
            try ServeSettings.resolve(flags: [:], environment: { env[$0] }, configFile: file.map { try! JSONParser.parse(Array($0.utf8)) })
        }
        #expect(try !resolve([:]).recordsRulesCoverage)
        #expect(try resolve(["HEARTH_RECORD_RULES_COVERAGE": "true"]).recordsRulesCoverage)
        #expect(try resolve([:], file: #"{"recordRulesCoverage": true}"#).recordsRulesCoverage)
        #expect(try resolve(["HEARTH_ACCEPT_EMULATOR_OWNER": "true"]).recordsRulesCoverage)
        #expect(throws: SettingError.self) { try resolve(["HEARTH_RECORD_RULES_COVERAGE": "sometimes"]) }
    }
}
