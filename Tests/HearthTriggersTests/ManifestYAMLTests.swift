import HearthJSON
import Testing
@testable import HearthTriggers

@Suite struct ManifestYAMLTests {
    static func parse(_ text: String) throws -> JSONValue { try ManifestYAML.parse(Array(text.utf8)) }

    /// The line and reason of the error `text` gets; fails the test when it parses.
    static func error(_ text: String) -> ManifestYAML.ParseError? {
        do {
            _ = try ManifestYAML.parse(Array(text.utf8))
            Issue.record("parsed: \(text)")
            return nil
        } catch {
            return error
        }
    }

    @Test func readsWhatYamlDumpWrites() throws {
        // The shape PyYAML's yaml.dump gives firebase-functions' manifest (sequences at the key's indentation).
        let text = """
            endpoints:
              created:
                availableMemoryMb: null
                eventTrigger:
                  eventFilterPathPatterns:
                    instance: '*'
                    ref: a/{x}/b
                  eventFilters: {}
                  eventType: google.firebase.database.ref.v1.created
                  retry: false
                labels: {}
                secretEnvironmentVariables: []
                timeoutSeconds: 120
            params: []
            requiredAPIs:
            - api: cloudscheduler.googleapis.com
              reason: Needed for scheduled functions.
            specVersion: v1alpha1

            """
        let expected: JSONValue = .object([
            "endpoints": .object(["created": .object([
                "availableMemoryMb": .null,
                "eventTrigger": .object([
                    "eventFilterPathPatterns": .object(["instance": .string("*"), "ref": .string("a/{x}/b")]),
                    "eventFilters": emptyObject,
                    "eventType": .string("google.firebase.database.ref.v1.created"),
                    "retry": .bool(false),
                ]),
                "labels": emptyObject, "secretEnvironmentVariables": .array([]), "timeoutSeconds": .int(120),
            ])]),
            "params": .array([]),
            "requiredAPIs": .array([.object(["api": .string("cloudscheduler.googleapis.com"), "reason": .string("Needed for scheduled functions.")])]),
            "specVersion": .string("v1alpha1"),
        ])
        #expect(try Self.parse(text) == expected)
    }

    @Test func typesPlainScalarsAsPyYAMLDoes() throws {
        let value = try Self.parse("a: ~\nb: true\nc: No\nd: -12\ne: 1.5\nf: 1.2.3\ng: http://h:8080/x\nh:\ni: '012'\nj: x # note\n?k: ?q\n")
        #expect(value == .object(["a": .null, "b": .bool(true), "c": .bool(false), "d": .int(-12), "e": .double(1.5),
                                  "f": .string("1.2.3"), "g": .string("http://h:8080/x"), "h": .null, "i": .string("012"), "j": .string("x"), "?k": .string("?q")]))
    }

    @Test func readsQuotedScalarsWithTheirEscapesAndFolding() throws {
        let value = try Self.parse("""
            'quoted key': 'it''s'
            b: "tab\\there \\u00e9 \\x41 \\"q\\""
            c: a long plain value
              folded over two lines
            d: 'single
              folded'
            e: "joined\\
              without space"
            f:
            - - nested
              - items
            - ''
            """)
        #expect(value == .object([
            "quoted key": .string("it's"), "b": .string("tab\there é A \"q\""),
            "c": .string("a long plain value folded over two lines"), "d": .string("single folded"),
            "e": .string("joinedwithout space"),
            "f": .array([.array([.string("nested"), .string("items")]), .string("")]),
        ]))
    }

    @Test func readsCRLFCommentsAndADocumentStart() throws {
        let value = try Self.parse("# the manifest\r\n---\r\nendpoints:\r\n  # none yet\r\n  f:\r\n    timeoutSeconds: 30\r\n\r\nspecVersion: v1alpha1\r\n")
        #expect(value == .object(["endpoints": .object(["f": .object(["timeoutSeconds": .int(30)])]), "specVersion": .string("v1alpha1")]))
    }

    @Test func readsTheSameManifestAsJSON() throws {
        #expect(try Self.parse("  {\"endpoints\": {}, \"specVersion\": \"v1alpha1\"}") == .object(["endpoints": emptyObject, "specVersion": .string("v1alpha1")]))
        #expect(Self.error("{\"endpoints\": ")?.reason.hasPrefix("not valid JSON") == true)
    }

    @Test func refusesWhatIsOutsideTheSubsetWithItsLine() {
        let cases: [(String, Int, String)] = [
            ("a: 1\nb: &anchor 2\n", 2, "anchors"),
            ("a: 1\nb: *alias\n", 2, "anchors"),
            ("a: !!python/object:x 1\n", 1, "tags"),
            ("a: |\n  text\n", 1, "block scalars"),
            ("a: {b: 1}\n", 1, "flow collections"),
            ("a: [1, 2]\n", 1, "flow collections"),
            ("a:\n\tb: 1\n", 2, "tab"),
            ("a: 1\na: 2\n", 2, "twice"),
            ("a:\n  b: 1\n   c: 2\n", 3, "indentation"),
            ("a: 1\n  b: 2\n", 2, "indentation"),
            ("? a\n: b\n", 1, "complex keys"),
            ("a: 'open\n", 1, "not closed"),
            ("a: \"\\q\"\n", 1, "unknown escape"),
            ("a: b: c\n", 1, "must be quoted"),
            ("a: 007\n", 1, "leading zero"),
            ("a: 99999999999999999999\n", 1, "out of range"),
            ("a: 1\n---\nb: 2\n", 2, "more than one document"),
            ("  a: 1\n", 1, "indented"),
            ("a: 'x' y\n", 1, "after a quoted value"),
            ("", 1, "empty"),
        ]
        for (text, line, reason) in cases {
            let error = Self.error(text)
            #expect(error?.line == line, "\(text)")
            #expect(error?.reason.contains(reason) == true, "\(text): \(error?.reason ?? "-")")
        }
        #expect(throws: ManifestYAML.ParseError(line: nil, reason: "not UTF-8 text")) { try ManifestYAML.parse([0x61, 0x3A, 0x20, 0xFF]) }
    }

    @Test func boundsTheSizeAndTheDepth() throws {
        let limit = ManifestYAML.maxBytes
        let filler = "a: '" + String(repeating: "x", count: limit - 6) + "'\n"
        #expect(filler.utf8.count == limit)
        #expect(try Self.parse(filler) == .object(["a": .string(String(repeating: "x", count: limit - 6))]))
        #expect(Self.error(filler + " ")?.reason == "larger than \(limit) bytes")

        // A value folded over a run of blank lines filling the limit: each line is read once.
        let blanks = limit - "a: x\n  y\n".utf8.count
        let folded = try Self.parse("a: x\n" + String(repeating: "\n", count: blanks) + "  y\n")
        #expect(folded == .object(["a": .string("x" + String(repeating: "\n", count: blanks) + "y")]))

        func nested(_ depth: Int) -> String {
            (0..<depth).map { String(repeating: "  ", count: $0) + "k:\n" }.joined() + String(repeating: "  ", count: depth) + "leaf: 1\n"
        }
        // depth mappings of `k` plus the innermost one.
        _ = try Self.parse(nested(ManifestYAML.maxDepth - 1))
        let deep = Self.error(nested(ManifestYAML.maxDepth))
        #expect(deep?.reason == "nested deeper than \(ManifestYAML.maxDepth) levels")
        let sequences = String(repeating: "- ", count: ManifestYAML.maxDepth + 1) + "x\n"
        #expect(Self.error(sequences)?.reason == "nested deeper than \(ManifestYAML.maxDepth) levels")
    }
}

/// `{}` (a bare `.object([:])` is ambiguous beside the literal helpers).
private let emptyObject = JSONValue.object([JSONKey: JSONValue]())
