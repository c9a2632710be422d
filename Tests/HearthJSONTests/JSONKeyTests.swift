import Testing
@testable import HearthJSON

/// `JSONKey`, `DataPath` equality and the parsers keep canonically equivalent keys apart.
@Suite struct JSONKeyTests {
    let nfc = "caf\u{E9}", nfd = "cafe\u{301}"

    @Test func keysCompareByCodeUnits() {
        #expect(nfc == nfd)  // Swift's String: canonical equivalence (why JSONKey exists)
        #expect(JSONKey(nfc) != JSONKey(nfd))
        #expect(Set([JSONKey(nfc), JSONKey(nfd), JSONKey("\u{212B}"), JSONKey("\u{C5}"), JSONKey("K"), JSONKey("\u{212A}")]).count == 6)
        #expect(JSONKey("a") == "a")
        #expect(!nfc.sameCodeUnits(as: nfd))
        #expect(nfc.sameCodeUnits(as: "caf\u{E9}"))
    }

    @Test func theParserAndWriterKeepTwins() throws {
        let value = try parse(#"{"caf\u00e9":1,"cafe\u0301":2,"\u212b":3,"\u00c5":4}"#)
        #expect(value.objectValue?.count == 4)
        #expect(value.objectValue?[nfd] == .int(2))
        let written = JSONWriter.write(value)
        #expect(try JSONParser.parse(written).objectValue?.count == 4)
        #expect(try FirebaseTree.normalize(value, at: .root)?.objectValue?.count == 4)
    }

    @Test func theStreamingReaderKeepsTwins() throws {
        var reader = JSONStreamReader(bytes: Array(#"{"caf\u00e9":1,"cafe\u0301":2}"#.utf8))
        let first = try #require(try reader.next())
        let value = try reader.value(startingWith: first)
        #expect(value.objectValue?.count == 2)
        #expect(value.objectValue?[nfc] == .int(1))
        #expect(value.objectValue?[nfd] == .int(2))
    }

    @Test func pathsCompareByCodeUnits() throws {
        let a = try DataPath(string: "x/\(nfc)"), b = try DataPath(string: "x/\(nfd)")
        #expect(a != b)
        #expect(Set([a, b]).count == 2)
        #expect(!a.isPrefix(of: try DataPath(string: "x/\(nfd)/y")))
        #expect(a.isPrefix(of: try DataPath(string: "x/\(nfc)/y")))
        #expect(a < b || b < a)
        let writes = try MultiPathUpdate.parse(base: .root, body: try parse(#"{"caf\u00e9":1,"cafe\u0301":{"b":2}}"#))
        #expect(writes.count == 2)
    }
}
