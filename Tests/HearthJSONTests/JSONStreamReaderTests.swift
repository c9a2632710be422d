import HearthTesting
import Testing
@testable import HearthJSON

/// `JSONStreamReader` against `JSONParser`: the same value or the same error (case and
/// offset) for every input, whatever the chunk size, so token boundaries fall everywhere.
@Suite("JSONStreamReader")
struct JSONStreamReaderTests {
    static let chunkSizes = [1, 2, 3, 7, 64, 4096]

    /// The whole document through the reader: its value, or its error.
    static func read(_ bytes: [UInt8], chunkBytes: Int, maxNesting: Int = JSONParser.maxNesting,
                     maxTokenBytes: Int = JSONStreamReader.defaultMaxTokenBytes) -> Result<JSONValue, JSONStreamError> {
        var reader = JSONStreamReader(bytes: bytes, maxNesting: maxNesting, maxTokenBytes: maxTokenBytes, chunkBytes: chunkBytes)
        do throws(JSONStreamError) {
            guard let first = try reader.next() else { return .failure(.source("no event")) }
            let value = try reader.value(startingWith: first)
            guard try reader.next() == nil else { return .failure(.source("events after the value")) }
            return .success(value)
        } catch {
            return .failure(error)
        }
    }

    static func parsed(_ bytes: [UInt8]) -> Result<JSONValue, JSONStreamError> {
        do throws(JSONParseError) {
            return .success(try JSONParser.parse(bytes))
        } catch {
            return .failure(.syntax(error))
        }
    }

    static func expectAgreement(_ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) {
        let expected = parsed(bytes)
        for size in chunkSizes {
            let actual = read(bytes, chunkBytes: size)
            #expect(actual == expected, "chunk \(size): \(String(decoding: bytes, as: UTF8.self))", sourceLocation: sourceLocation)
        }
    }

    static let documents: [String] = [
        "null", "true", "false", "0", "-0", "-1", "3.25", "1e3", "-1.5E-3", "9223372036854775807",
        "9223372036854775808", "-9223372036854775809", "1e400", "123456789012345678901234567890.5e-3",
        "\"\"", "\"x\"", "[]", "{}", " \t\r\n[ ] ", "[[[]]]", "[{}]",
        #"{"users":{"alice":{"name":"Alice","age":30,"tags":["a","b"],"score":97.5}}}"#,
        #"{"escapes":"quote \" backslash \\ slash \/ nl \n tab \t ctl \u0001 é \u00e9 😀 \ud83d\ude00"}"#,
        #"{"a":1,"a":{"b":2}}"#,
        #"  [ {"a" : 1 } , { "b" : [ ] } , null , true , "s" , -2.5e+2 ]  "#,
        "日本", "\"日本語\"",
        // Invalid.
        "", " ", "tru", "nul", "fals", "truex", "nulL", "t", "[tru]", "01", "-", "1.", ".5", "1e", "1e+", "+1",
        "--1", "1.5.3", "12a", "1e5e", "[1 2]", "[1,]", "[,1]", "[", "[1", "{", "{\"a\"}", "{\"a\":}", "{\"a\":1,}",
        "{a:1}", "{\"a\" 1}", "{\"a\":1", "\"abc", "\"a\u{1}b\"", #""\x""#, #""\u12""#, #""\""#, #""\ud800""#,
        #""\ud800\u0041""#, "/* c */ 1", "\u{FEFF}1", "1 2", "{} x", "[]]", "{\"a\":1}}", "[-]", "[1.]", "{\"a\":-}",
        "\"\\", "\"\\u00", "[\"a\"", "{\"a\"", "{\"a\":", "{\"a\":1,", "{\"a\":1 \"b\":2}", "[1}", "{\"a\":1]", "1e99999",
    ]

    @Test(arguments: documents)
    func agreesWithTheParser(_ text: String) {
        Self.expectAgreement(Array(text.utf8))
    }

    @Test(arguments: [
        [0x22, 0x80, 0x22], [0x22, 0xC0, 0x80, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22], [0x22, 0xC3, 0x22],
        [0x22, 0xC3], [0x22, 0x5C, 0x6E, 0xC3, 0x28, 0x22], [0xC3, 0xA9], [0x5B, 0x22, 0xF4, 0x90, 0x80, 0x80, 0x22, 0x5D],
    ] as [[UInt8]])
    func agreesOnInvalidUTF8(_ bytes: [UInt8]) {
        Self.expectAgreement(bytes)
    }

    /// Random documents, then random damage to them (cuts, flipped and inserted bytes):
    /// the reader and the parser never disagree.
    @Test func agreesOnRandomAndDamagedDocuments() {
        var generator = SplitMix64(seed: 7)
        for _ in 0..<300 {
            let value = Self.randomValue(depth: 0, using: &generator)
            let text = JSONWriter.write(value, style: Bool.random(using: &generator) ? .compact : .pretty)
            Self.expectAgreement(text)
            var damaged = text
            switch generator.next() % 3 {
            case 0: damaged = Array(damaged.prefix(Int(generator.next() % UInt64(damaged.count + 1))))
            case 1 where !damaged.isEmpty: damaged[Int(generator.next() % UInt64(damaged.count))] = UInt8(truncatingIfNeeded: generator.next())
            default: damaged.insert(Array(#"{}[],:"\ 1e-.tfn"#.utf8).randomElement(using: &generator)!, at: Int(generator.next() % UInt64(damaged.count + 1)))
            }
            Self.expectAgreement(damaged)
        }
    }

    static func randomValue(depth: Int, using generator: inout SplitMix64) -> JSONValue {
        let strings = ["", "a", "key", "é", "😀", "with \"quote\"", "back\\slash", "line\nbreak", "\u{1}", String(repeating: "long ", count: 40)]
        switch generator.next() % (depth > 4 ? 5 : 7) {
        case 0: return .null
        case 1: return .bool(generator.next() % 2 == 0)
        case 2: return .int(Int64(bitPattern: generator.next()) >> (generator.next() % 64))
        case 3:
            let d = Double(bitPattern: generator.next())
            return .double(d.isFinite ? d : 0.5)
        case 4: return .string(strings[Int(generator.next() % UInt64(strings.count))])
        case 5: return .array((0..<Int(generator.next() % 5)).map { _ in randomValue(depth: depth + 1, using: &generator) })
        default:
            var members: [String: JSONValue] = [:]
            for _ in 0..<Int(generator.next() % 5) {
                members[strings[Int(generator.next() % UInt64(strings.count))] + String(generator.next() % 10)] = randomValue(depth: depth + 1, using: &generator)
            }
            return .object(members)
        }
    }

    @Test func deliversEventsInDocumentOrder() throws {
        var reader = JSONStreamReader(bytes: Array(#"{"a":[1,"x",{"b":null}],"c":true,"a":false}"#.utf8), chunkBytes: 3)
        var events: [JSONStreamReader.Event] = []
        while let event = try reader.next() { events.append(event) }
        #expect(events == [
            .objectStart, .key("a"), .arrayStart, .value(.int(1)), .value(.string("x")), .objectStart, .key("b"),
            .value(.null), .objectEnd, .arrayEnd, .key("c"), .value(.bool(true)), .key("a"), .value(.bool(false)), .objectEnd,
        ])
        #expect(try reader.next() == nil)
        #expect(reader.depth == 0)
    }

    @Test func literalsAndTheirBrokenForms() throws {
        for (text, value) in [("true", JSONValue.bool(true)), ("false", .bool(false)), ("null", .null), (" null ", .null)] {
            #expect(Self.read(Array(text.utf8), chunkBytes: 1) == .success(value))
        }
        #expect(Self.read(Array("tru".utf8), chunkBytes: 2) == .failure(.syntax(.unexpectedEndOfInput(offset: 3))))
        #expect(Self.read(Array("trUe".utf8), chunkBytes: 2) == .failure(.syntax(.unexpectedByte(UInt8(ascii: "U"), offset: 2))))
        #expect(Self.read(Array("[nulll]".utf8), chunkBytes: 2) == .failure(.syntax(.unexpectedByte(UInt8(ascii: "l"), offset: 5))))
    }

    // MARK: Limits

    /// `maxNesting` containers are fine; one more is `nestingTooDeep` at its bracket.
    @Test func nestingLimit() {
        let limit = 6
        let ok = String(repeating: "[", count: limit) + String(repeating: "]", count: limit)
        if case .failure(let error) = Self.read(Array(ok.utf8), chunkBytes: 2, maxNesting: limit) { Issue.record("\(error)") }
        let deep = "{\"a\":" + String(repeating: "[", count: limit) + String(repeating: "]", count: limit) + "}"
        #expect(Self.read(Array(deep.utf8), chunkBytes: 2, maxNesting: limit) == .failure(.syntax(.nestingTooDeep(offset: 5 + limit - 1))))
        // The default is the parser's.
        let tooDeep = String(repeating: "[", count: JSONParser.maxNesting + 1) + String(repeating: "]", count: JSONParser.maxNesting + 1)
        Self.expectAgreement(Array(tooDeep.utf8))
        #expect(Self.read(Array(tooDeep.utf8), chunkBytes: 64) == .failure(.syntax(.nestingTooDeep(offset: JSONParser.maxNesting))))
    }

    /// A string or number of `maxTokenBytes` raw bytes is read; one byte more is refused
    /// at its first byte, before it is held whole.
    @Test func tokenLimit() {
        let limit = 40
        let fits = "[\"" + String(repeating: "x", count: limit - 2) + "\"]"
        #expect(Self.read(Array(fits.utf8), chunkBytes: 5, maxTokenBytes: limit) == .success(.array([.string(String(repeating: "x", count: limit - 2))])))
        let long = "[\"" + String(repeating: "x", count: limit - 1) + "\"]"
        #expect(Self.read(Array(long.utf8), chunkBytes: 5, maxTokenBytes: limit) == .failure(.tokenTooLong(limit: limit, offset: 1)))
        let unterminated = "\"" + String(repeating: "x", count: 10 * limit)
        #expect(Self.read(Array(unterminated.utf8), chunkBytes: 5, maxTokenBytes: limit) == .failure(.tokenTooLong(limit: limit, offset: 0)))
        let number = String(repeating: "1", count: limit)
        #expect(Self.read(Array(number.utf8), chunkBytes: 7, maxTokenBytes: limit) == .success(.double(Double(number)!)))
        #expect(Self.read(Array((number + "1").utf8), chunkBytes: 7, maxTokenBytes: limit) == .failure(.tokenTooLong(limit: limit, offset: 0)))
    }

    /// After a long token the reader gives its grown buffer back and keeps going.
    @Test func longTokensThenMore() {
        let long = String(repeating: "é", count: 50_000)
        let text = "[\"" + long + "\"," + (0..<1000).map(String.init).joined(separator: ",") + "]"
        #expect(Self.read(Array(text.utf8), chunkBytes: 16) == Self.parsed(Array(text.utf8)))
    }

    /// `value(startingWith:maxBytes:)` reads a part whole up to `maxBytes`; `skip` reads
    /// past one, keeping nothing.
    @Test func partsReadWholeOrSkipped() throws {
        let text = #"{"skip":{"deep":[1,2,{"x":"y"}]},"take":{"a":[true]},"big":"0123456789"}"#
        var reader = JSONStreamReader(bytes: Array(text.utf8), chunkBytes: 4)
        #expect(try reader.next() == .objectStart)
        #expect(try reader.next() == .key("skip"))
        try reader.skip(startingWith: try #require(try reader.next()))
        #expect(try reader.next() == .key("take"))
        let take = try #require(try reader.next())
        // `{"a":[true]}` is 12 bytes: 11 after its opening brace.
        #expect(try reader.value(startingWith: take, maxBytes: 11) == .object(["a": .array([.bool(true)])]))
        #expect(try reader.next() == .key("big"))
        #expect(try reader.value(startingWith: try #require(try reader.next()), maxBytes: 0) == .string("0123456789"))
        #expect(try reader.next() == .objectEnd)
        #expect(try reader.next() == nil)

        var again = JSONStreamReader(bytes: Array(#"[{"a":[true]}]"#.utf8), chunkBytes: 4)
        #expect(try again.next() == .arrayStart)
        let first = try #require(try again.next())
        #expect(throws: JSONStreamError.valueTooLarge(limit: 10, offset: 2)) { try again.value(startingWith: first, maxBytes: 10) }
    }

    @Test func sourceErrorsPropagate() {
        var calls = 0
        var reader = JSONStreamReader(chunkBytes: 4) { target throws(JSONStreamError) in
            calls += 1
            if calls > 1 { throw .source("disk on fire") }
            let bytes = Array("[1,2".utf8)
            bytes.withUnsafeBytes { target.baseAddress!.copyMemory(from: $0.baseAddress!, byteCount: bytes.count) }
            return bytes.count
        }
        #expect(throws: JSONStreamError.source("disk on fire")) {
            while try reader.next() != nil {}
        }
    }

    @Test func offsetsCountFromTheStartOfTheInput() throws {
        var reader = JSONStreamReader(bytes: Array(#"  {"k": 12}"#.utf8), chunkBytes: 2)
        #expect(try reader.next() == .objectStart)
        #expect(reader.offset == 3)
        #expect(try reader.next() == .key("k"))
        #expect(try reader.next() == .value(.int(12)))
        #expect(reader.offset == 10)
    }
}
