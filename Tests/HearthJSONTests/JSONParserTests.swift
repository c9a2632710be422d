import Testing
@testable import HearthJSON

@Suite("JSONParser")
struct JSONParserTests {
    @Test(arguments: [
        ("null", JSONValue.null),
        ("true", .bool(true)),
        ("false", .bool(false)),
        (" \t\r\n 0 \n", .int(0)),
        ("-0", .int(0)),
        ("42", .int(42)),
        ("-17", .int(-17)),
        ("1.5", .double(1.5)),
        ("-0.0", .double(-0.0)),
        ("5.0", .double(5.0)),
        ("1e2", .double(100)),
        ("1E+2", .double(100)),
        ("25e-1", .double(2.5)),
        ("0.1", .double(0.1)),
        ("1e-400", .double(0)),
        ("123456789.123456789e-3", .double(123456.789123456789)),
        ("1.7976931348623157e308", .double(.greatestFiniteMagnitude)),
        ("4.9e-324", .double(.leastNonzeroMagnitude)),
        ("\"\"", .string("")),
        ("\"abc\"", .string("abc")),
        (#""a\"b\\c\/d\b\f\n\r\t""#, .string("a\"b\\c/d\u{08}\u{0C}\n\r\t")),
        (#""\u0041\u00e9\u20AC""#, .string("Aé€")),
        (#""\u0000""#, .string("\u{0}")),
        (#""\uD83D\uDE00""#, .string("😀")),
        (#""\ud83d\ude00x""#, .string("😀x")),
        ("\"héllo wörld 日本 😀\"", .string("héllo wörld 日本 😀")),
        ("\"\u{7F}\"", .string("\u{7F}")),
        ("[]", .array([])),
        ("[ ]", .array([])),
        ("{}", .object([JSONKey: JSONValue]())),
        ("{ }", .object([JSONKey: JSONValue]())),
        ("[1,\"a\",null,true,[],{}]", .array([1, "a", .null, true, [], [:]])),
        (#"{"a":1,"b":{"c":[2,3]}}"#, ["a": 1, "b": ["c": [2, 3]]] as JSONValue),
        (#" { "a" : 1 , "b" : [ 1 , 2 ] } "#, ["a": 1, "b": [1, 2]] as JSONValue),
        (#"{"a":1,"a":2}"#, ["a": 2] as JSONValue),
        (#"{"":0}"#, ["": 0] as JSONValue),
    ])
    func accepts(_ text: String, _ expected: JSONValue) throws {
        let value = try parse(text)
        #expect(value == expected)
        // `==` on doubles cannot tell -0.0 from 0.0; check the sign where it matters.
        if case .double(let e) = expected, case .double(let v) = value {
            #expect(v.sign == e.sign)
        }
    }

    @Test(arguments: [
        ("", "end"),
        ("   ", "end"),
        ("nul", "end"),
        ("nulx", "byte"),
        ("True", "byte"),
        ("NaN", "byte"),
        ("-NaN", "number"),
        ("Infinity", "byte"),
        ("-Infinity", "number"),
        ("undefined", "byte"),
        ("'a'", "byte"),
        ("01", "number"),
        ("-01", "number"),
        ("00", "number"),
        ("1.", "number"),
        (".5", "byte"),
        ("-", "number"),
        ("+1", "byte"),
        ("1e", "number"),
        ("1e+", "number"),
        ("0x10", "trailing"),
        ("1 2", "trailing"),
        ("[1] x", "trailing"),
        ("{} {}", "trailing"),
        ("1e309", "range"),
        ("-1e309", "range"),
        ("1e99999999999999999999", "range"),
        ("123456789e999", "range"),
        ("[1,]", "byte"),
        ("[,1]", "byte"),
        ("[1 2]", "byte"),
        ("[", "end"),
        ("[1", "end"),
        ("{", "end"),
        (#"{"a"}"#, "byte"),
        (#"{"a":}"#, "byte"),
        (#"{"a":1,}"#, "byte"),
        (#"{a:1}"#, "byte"),
        (#"{"a" 1}"#, "byte"),
        (#"{"a":1"#, "end"),
        ("\"abc", "end"),
        ("\"a\u{1}b\"", "control"),
        ("\"a\nb\"", "control"),
        ("\"\t\"", "control"),
        (#""\x""#, "escape"),
        (#""\u12""#, "escape"),
        (#""\u12G4""#, "escape"),
        (#""\U0041""#, "escape"),
        (#""\""#, "end"),
        (#""\ud800""#, "surrogate"),
        (#""\ud800x""#, "surrogate"),
        (#""\udc00""#, "surrogate"),
        (#""\ud800\u0041""#, "surrogate"),
        (#""\ud800\ud800""#, "surrogate"),
        (#""\ude00\ud83d""#, "surrogate"),
        ("/* c */ 1", "byte"),
        ("\u{FEFF}1", "byte"),
    ])
    func rejects(_ text: String, _ expectedKind: String) {
        #expect(throws: JSONParseError.self) { try parse(text) }
        if let error = parseError(Array(text.utf8)) {
            #expect(kind(error) == expectedKind, "\(text): \(error.debugDescription)")
        }
    }

    @Test(arguments: [
        [0x22, 0x80, 0x22],  // lone continuation byte
        [0x22, 0xC0, 0x80, 0x22],  // overlong NUL
        [0x22, 0xC1, 0xBF, 0x22],  // overlong
        [0x22, 0xE0, 0x80, 0x80, 0x22],  // overlong 3-byte
        [0x22, 0xED, 0xA0, 0x80, 0x22],  // encoded surrogate U+D800
        [0x22, 0xF0, 0x80, 0x80, 0x80, 0x22],  // overlong 4-byte
        [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22],  // > U+10FFFF
        [0x22, 0xF5, 0x80, 0x80, 0x80, 0x22],
        [0x22, 0xFF, 0x22],
        [0x22, 0xC3, 0x22],  // truncated sequence
        [0x22, 0xE2, 0x82, 0x22],
        [0x22, 0xC3],  // truncated at end of input
        [0x22, 0x5C, 0x6E, 0xC3, 0x28, 0x22],  // invalid after an escape (slow path)
    ] as [[UInt8]])
    func rejectsInvalidUTF8(_ bytes: [UInt8]) {
        let error = parseError(bytes)
        #expect(error.map(kind) == "utf8")
    }

    @Test func acceptsEveryWellFormedUTF8Length() throws {
        // U+0080, U+07FF, U+0800, U+FFFF, U+10000, U+10FFFF, at the edges of each length.
        let text = "\u{80}\u{7FF}\u{800}\u{D7FF}\u{E000}\u{FFFF}\u{10000}\u{10FFFF}"
        #expect(try JSONParser.parse(Array("\"\(text)\"".utf8)) == .string(text))
    }

    @Test func nonASCIIOutsideStringsIsUnexpected() {
        #expect(parseError([0xC3, 0xA9]).map(kind) == "byte")
    }

    // MARK: Integers

    @Test(arguments: [
        ("9223372036854775807", JSONValue.int(.max)),
        ("-9223372036854775808", .int(.min)),
        ("9223372036854775808", .double(9223372036854775808)),
        ("-9223372036854775809", .double(-9_223_372_036_854_775_808.0)),
        ("18446744073709551616", .double(18446744073709551616)),
        ("100000000000000000000000000000", .double(1e29)),
        ("9007199254740993", .int(9_007_199_254_740_993)),
        ("9223372036854775807.0", .double(9_223_372_036_854_775_808.0)),
        ("1e3", .double(1000)),
    ])
    func integerExactness(_ text: String, _ expected: JSONValue) throws {
        #expect(try parse(text) == expected)
    }

    @Test func doublesAreCorrectlyRounded() throws {
        // Inputs that need more than the fast path (long mantissas, large exponents).
        let cases = [
            "0.30000000000000004", "2.2250738585072011e-308", "2.2250738585072014e-308",
            "9007199254740993.0", "1.00000000000000011102230246251565404236316680908203125",
            "123456789012345678901234567890e-10", "0.000000000000000000000000000001234",
            "3.141592653589793238462643383279", "1e22", "1e23", "8.98846567431158e307",
        ]
        for text in cases {
            let value = try parse(text)
            #expect(value == .double(Double(text)!), "\(text)")
        }
    }

    // MARK: Nesting

    @Test func nestingUpToTheLimitIsAccepted() throws {
        let n = JSONParser.maxNesting
        let text = String(repeating: "[", count: n) + String(repeating: "]", count: n)
        let parsed = try parse(text)
        // The recursive walks over such a value (writer, ==, hashing) must cope as well.
        #expect(json(parsed) == text)
        #expect(try parse(json(parsed, style: .pretty)) == parsed)
        #expect(Set([parsed]).count == 1)
        var value = parsed
        var depth = 1
        while case .array(let elements) = value, let first = elements.first {
            value = first
            depth += 1
        }
        #expect(depth == n)
        let objects = String(repeating: "{\"a\":", count: n) + "1" + String(repeating: "}", count: n)
        _ = try parse(objects)
    }

    @Test func nestingOverTheLimitIsRejected() {
        let n = JSONParser.maxNesting + 1
        for text in [
            String(repeating: "[", count: n) + String(repeating: "]", count: n),
            String(repeating: "{\"a\":", count: n) + "{}" + String(repeating: "}", count: n),
            String(repeating: "[", count: 1_000_000),
        ] {
            let error = parseError(Array(text.utf8))
            #expect(error.map(kind) == "nesting")
        }
    }

    // MARK: Errors

    @Test func errorsCarryOffsets() {
        #expect(parseError(Array("[1,2,x]".utf8)) == .unexpectedByte(UInt8(ascii: "x"), offset: 5))
        #expect(parseError(Array("{\"a\":1} 7".utf8)) == .trailingData(offset: 8))
        #expect(parseError(Array(#"["ok", "\q"]"#.utf8)) == .invalidEscape(offset: 8))
        #expect(parseError([]) == .unexpectedEndOfInput(offset: 0))
    }

    @Test func errorDescriptionIsGeneric() {
        let error = parseError(Array("{\"secret\": x}".utf8))!
        #expect(error.description == "Invalid data; couldn't parse JSON object, array, or value.")
        #expect(!error.description.contains("secret"))
        #expect(error.debugDescription.contains("offset 11"))
    }

    // MARK: Entry points

    @Test func entryPointsAgree() throws {
        let text = #"{"k":[1,2.5,"é"]}"#
        let expected: JSONValue = ["k": [1, 2.5, "é"]]
        let bytes = Array(text.utf8)
        #expect(try JSONParser.parse(text) == expected)
        #expect(try JSONParser.parse(bytes) == expected)
        #expect(try JSONParser.parse(bytes[...]) == expected)
        #expect(try bytes.withUnsafeBytes { try JSONParser.parse($0) } == expected)
        #expect(try JSONParser.parse(AnyCollectionOfBytes(bytes)) == expected)
    }
}

/// A byte collection without contiguous storage, to exercise the fallback path.
private struct AnyCollectionOfBytes: Collection {
    let bytes: [UInt8]
    init(_ bytes: [UInt8]) { self.bytes = bytes }
    var startIndex: Int { 0 }
    var endIndex: Int { bytes.count }
    func index(after i: Int) -> Int { i + 1 }
    subscript(i: Int) -> UInt8 { bytes[i] }
}
