import HearthJSON
@testable import HearthRules
import Testing

/// Load-time errors name the rule path and the line and column in the file
/// (docs/protocol/rules.md §3.6).
@Suite struct CompileErrorTests {
    /// Line and column (1-based) of the first occurrence of `needle` in `text`.
    static func position(of needle: String, in text: String, after marker: String? = nil) -> (line: Int, column: Int) {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        var seenMarker = marker == nil
        for (number, line) in lines.enumerated() {
            if !seenMarker, let marker, line.contains(marker) { seenMarker = true }
            if seenMarker, let range = line.range(of: needle) {
                return (number + 1, line.distance(from: line.startIndex, to: range.lowerBound) + 1)
            }
        }
        fatalError("\(needle) not found")
    }

    @Test func badTokenInMultiLineFileWithComments() {
        let text = """
        {
          // Who may read what. "quotes" and /* in a comment */ are ignored.
          "rules": {
            /* users
               and their data */
            "users": {
              "$uid": {
                ".read": "auth != null && \\"x\\" == fooBar",
                ".write": false
              }
            }
          }
        }
        """
        let found = diagnostics(text)
        #expect(found.count == 1)
        let expected = Self.position(of: "fooBar", in: text)
        #expect(found.first == RuleDiagnostic(kind: .expression, rulePath: "/rules/users/$uid/.read", line: expected.line, column: expected.column, message: "unknown variable 'fooBar'"))
    }

    @Test func errorInsideAStringSpanningLines() {
        let text = """
        {"rules": {
          "a": {
            ".write": "auth != null &&
                       newData.exists() &&
                       nope == 1"
          }
        }}
        """
        let found = diagnostics(text)
        let expected = Self.position(of: "nope", in: text)
        #expect(found.map(\.line) == [expected.line])
        #expect(found.map(\.column) == [expected.column])
        #expect(found.first?.rulePath == "/rules/a/.write")
    }

    @Test func columnsCountCharactersNotBytes() {
        let text = #"{"rules": {"é": {".read": "'ü' == zzz"}}}"#
        let found = diagnostics(text)
        #expect(found.first?.column == Self.position(of: "zzz", in: text).column)
        #expect(found.first?.rulePath == "/rules/é/.read")
    }

    @Test func everyProblemIsReported() {
        let text = """
        {"rules": {
          ".read": "unknownA == 1",
          "a": {
            ".write": "newData.val() > true",
            ".bogus": true,
            "$x": {".validate": "$y == 'z'"},
            "$w": {".read": true}
          },
          "b": {".read": "query.foo == 1 || unknownB"},
          "c": null
        }}
        """
        let found = diagnostics(text)
        let paths = found.map(\.rulePath)
        #expect(paths == [
            "/rules/.read",
            "/rules/a/.write",
            "/rules/a/.bogus",
            "/rules/a/$x/.validate",
            "/rules/a/$w",
            "/rules/b/.read",
            "/rules/b/.read",
            "/rules/c",
        ])
        #expect(found.allSatisfy { $0.line > 0 && $0.column > 0 })
        #expect(found[0].kind == .expression)
        #expect(found[2].kind == .structure)
        #expect(found[4].message.contains("only one wildcard"))
    }

    @Test func syntaxErrorsPointAtTheProblem() {
        let text = "{\n  \"rules\": {\n    \".read\": true,\n  }\n}"
        let found = diagnostics(text)
        #expect(found.count == 1)
        #expect(found.first?.kind == .syntax)
        #expect(found.first?.line == 4)
        #expect(found.first?.message.contains("trailing comma") == true)
    }

    @Test func descriptionIsReadable() {
        let found = diagnostics(#"{"rules": {".read": "nope"}}"#)
        #expect(found.first?.description == "line 1, column 22: /rules/.read: unknown variable 'nope'")
    }

    @Test func parsedJSONRulesReportColumnsWithinTheExpression() throws {
        let json = JSONValue.object(["rules": .object([".read": .string("auth != null && nope")])])
        do {
            _ = try RuleSet.compile(json: json)
            Issue.record("must not compile")
        } catch {
            #expect(error.diagnostics.first?.line == 0)
            #expect(error.diagnostics.first?.column == 17)
        }
    }

    struct Expression: Sendable, CustomTestStringConvertible {
        let rule: String
        let kind: RuleKind
        let valid: Bool
        init(_ rule: String, _ kind: RuleKind = .read, valid: Bool) {
            self.rule = rule
            self.kind = kind
            self.valid = valid
        }
        var testDescription: String { "\(kind.rawValue): \(rule)" }
    }

    /// Type-checker decisions the corpus does not pin (docs/protocol/rules.md §3.1,
    /// §3.3–§3.5).
    @Test(arguments: [
        Expression("newData.exists()", .read, valid: false),
        Expression("newData.exists()", .write, valid: true),
        Expression("newData.exists()", .validate, valid: true),
        Expression("query.limitToFirst <= 10", .read, valid: true),
        Expression("query.limitToFirst <= 10", .write, valid: false),
        Expression("query.limitToFirst <= 10", .validate, valid: false),
        Expression("root.child('x') != null", valid: false),
        Expression("data == newData", .write, valid: false),
        Expression("root.child('x').val() != null", valid: true),
        Expression("root.exists", valid: false),
        Expression("root.exists == true", valid: false),
        Expression("root.val().length > 2", valid: true),
        Expression("root.val().matches(/a/)", valid: true),
        Expression("/a/ == 1", valid: false),
        Expression("root.val().matches(/a/, /b/)", valid: false),
        Expression("['a'] == 1", valid: false),
        Expression("root.hasChildren([])", valid: false),
        Expression("root.hasChildren(['a', auth.uid, $x])", valid: true),
        Expression("root.hasChildren(['a', $y])", valid: false),
        Expression("root.hasChildren(['a', auth.uid])", valid: true),
        Expression("root.hasChildren(['a', 1])", valid: false),
        Expression("root.child(null).exists()", valid: false),
        Expression("root.child(1).exists()", valid: false),
        Expression("root.child(auth.uid).exists()", valid: true),
        Expression("auth.token[auth.uid] == true", valid: true),
        Expression("auth.token.admin", valid: false),
        Expression("auth.token.admin == true", valid: true),
        Expression("data.val() && true", valid: false),
        Expression("!data.val()", valid: false),
        Expression("true ? 1 : 2", valid: false),
        Expression("(true ? 1 : 2) == 1", valid: true),
        Expression("auth.uid ? true : false", valid: false),
        Expression("1 < 'a'", valid: false),
        Expression("now > 0", valid: true),
        Expression("now.foo == 1", valid: false),
        Expression("-'a' == 1", valid: false),
        Expression("'a' - 1 == 1", valid: false),
        Expression("true + 1 == 2", valid: false),
        Expression("null + 1 == 2", valid: false),
        Expression("'a' + 1 == 'a1'", valid: true),
        Expression("+1 == 1", valid: false),
        Expression("1 & 1 == 1", valid: false),
        Expression("auth.uid.toUpperCase() == 'A'", valid: true),
        Expression("auth.uid.toUpperCase == 'A'", valid: true),
        Expression("root.val().toUpperCase == 'A'", valid: false),
        Expression("'a'.size == 1", valid: false),
        Expression("root['child']('x').exists()", valid: true),
        Expression("root[auth.uid]('x').exists()", valid: false),
        Expression("query['orderByKey']", valid: true),
        Expression("root.getPriority() == null", valid: true),
        Expression("'x'.matches('x')", valid: false),
        Expression("1 == 1 // comment", valid: false),
        Expression("0x10 == 16", valid: false),
        Expression("1e3 == 1000", valid: true),
        Expression(".5 == 0.5", valid: true),
        Expression("'\\u0041' == 'A'", valid: true),
        Expression("'unterminated == 1", valid: false),
        Expression("undefined == null", valid: false),
        Expression("this == null", valid: false),
    ])
    func typeChecking(_ test: Expression) {
        let escaped = test.rule.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
        let text = #"{"rules": {"$x": {"\#(test.kind.rawValue)": "\#(escaped)"}}}"#
        let found = diagnostics(text)
        #expect(found.isEmpty == test.valid, "\(found)")
    }

    struct Structure: Sendable, CustomTestStringConvertible {
        let json: String
        let valid: Bool
        var testDescription: String { json }
    }

    @Test(arguments: [
        Structure(json: #"{"rules": {"a": {".indexOn": ["x", "y/z", ".value"]}}}"#, valid: true),
        Structure(json: #"{"rules": {"a": {".indexOn": "a.b"}}}"#, valid: false),
        Structure(json: #"{"rules": {"a": {".indexOn": []}}}"#, valid: true),
        Structure(json: #"{"rules": {".priority": true}}"#, valid: false),
        Structure(json: #"{"rules": {"a": true}}"#, valid: false),
        Structure(json: #"{"rules": {"a": "x"}}"#, valid: false),
        Structure(json: #"{"rules": {"a#b": {}}}"#, valid: false),
        Structure(json: #"{"rules": {"$": {}}}"#, valid: false),
        Structure(json: #"{"rules": {"$a-b": {}}}"#, valid: false),
        Structure(json: #"{"rules": {"$a": {"b": {"$a": {}}}}}"#, valid: false),
        Structure(json: #"{"rules": {"$a": {}, "b": {"$a": {}}}}"#, valid: true),
        Structure(json: #"{"rules": {}, "extra": 1}"#, valid: false),
        Structure(json: #"{"rules": []}"#, valid: false),
        Structure(json: #"{"rules": {".read": true, ".read": false}}"#, valid: false),
        Structure(json: #"{"rules": {"a": {}},}"#, valid: false),
        Structure(json: #"{'rules': {}}"#, valid: false),
        Structure(json: #"{"rules": {}} // trailing comment"#, valid: true),
        Structure(json: #"{"rules": {}} x"#, valid: false),
        Structure(json: "", valid: false),
    ])
    func structure(_ test: Structure) {
        #expect(diagnostics(test.json).isEmpty == test.valid)
    }
}

/// A misspelt literal or an unquoted word is named whole (`tru` was reported as
/// "unexpected character 't'").
@Suite struct UnexpectedWordTests {
    @Test(arguments: [
        (#"{"rules": {".read": tru}}"#, "unexpected word 'tru', expected a JSON value (did you mean true?)"),
        (#"{"rules": {".read": Falsey}}"#, "unexpected word 'Falsey', expected a JSON value (did you mean false?)"),
        (#"{"rules": {".read": auth}}"#, "unexpected word 'auth', expected a JSON value (strings are quoted)"),
        (#"{"rules": {".read": "# + String(repeating: "x", count: 50) + "}}",
         "unexpected word '" + String(repeating: "x", count: RulesFileParser.maxQuotedWordBytes) + "…', expected a JSON value (strings are quoted)"),
        (#"{"rules": {".read": @}}"#, "unexpected character '@', expected a JSON value"),
    ])
    func theWordIsNamed(text: String, message: String) {
        let found = diagnostics(text)
        #expect(found.count == 1)
        #expect(found.first?.kind == .syntax)
        #expect(found.first?.message == message, "\(found)")
        #expect(found.first?.column == 21)
    }
}
