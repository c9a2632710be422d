import HearthHTTP
import HearthJSON
import HearthRules
import HearthTesting
import Testing
@testable import HearthServer

/// Keys are compared as Firebase compares them, by their exact code units: canonically
/// equivalent keys ("caf\u{E9}" and "cafe\u{301}", "\u{212B}" and "\u{C5}") are different
/// children everywhere. Swift's
/// `String` equality would merge them.
@Suite struct CodeUnitKeyTests {
    static let nfc = "caf\u{E9}"
    static let nfd = "cafe\u{301}"
    static let nfcURL = "caf%C3%A9"
    static let nfdURL = "cafe%CC%81"

    let h: RouterHarness
    init() throws { h = try RouterHarness() }

    /// The members of a JSON object response, by key bytes.
    func members(_ response: HTTPResponse) -> [[UInt8]: JSONValue] {
        guard case .object(let members)? = response.json else { return [:] }
        return Dictionary(uniqueKeysWithValues: members.map { (Array($0.key.utf8), $0.value) })
    }

    @Test func putKeepsEquivalentKeysApart() async {
        let put = await h.send("PUT", "/k.json", #"{"caf\u00e9":1,"cafe\u0301":2,"\u212b":3,"\u00c5":4}"#)
        #expect(put.status == 200)
        let got = members(await h.send("GET", "/k.json"))
        #expect(got.count == 4)
        #expect(got[Array(Self.nfc.utf8)] == .int(1))
        #expect(got[Array(Self.nfd.utf8)] == .int(2))
        #expect(got[Array("\u{212B}".utf8)] == .int(3))
        #expect(got[Array("\u{C5}".utf8)] == .int(4))
        let shallow = members(await h.send("GET", "/k.json?shallow=true"))
        #expect(shallow.count == 4)
    }

    @Test func readsOfOneKeyNeverAnswerForItsTwin() async {
        _ = await h.send("PUT", "/k.json", #"{"caf\u00e9":1,"cafe\u0301":2}"#)
        // Twice, so the first body is in the read cache before the twin is asked for.
        #expect(await h.send("GET", "/k/\(Self.nfcURL).json").text == "1")
        #expect(await h.send("GET", "/k/\(Self.nfcURL).json").text == "1")
        #expect(await h.send("GET", "/k/\(Self.nfdURL).json").text == "2")
        #expect(await h.send("GET", "/k/\(Self.nfdURL).json").text == "2")
        // A write to one twin leaves the other's cached body valid and correct.
        _ = await h.send("PUT", "/k/\(Self.nfdURL).json", "20")
        #expect(await h.send("GET", "/k/\(Self.nfcURL).json").text == "1")
        #expect(await h.send("GET", "/k/\(Self.nfdURL).json").text == "20")
    }

    @Test func patchAndMultiPathUpdatesTreatTwinsAsTwoPaths() async {
        _ = await h.send("PUT", "/k.json", #"{"caf\u00e9":1}"#)
        let patch = await h.send("PATCH", "/k.json", #"{"cafe\u0301":2}"#)
        #expect(patch.status == 200)
        let got = members(await h.send("GET", "/k.json"))
        #expect(got == [Array(Self.nfc.utf8): .int(1), Array(Self.nfd.utf8): .int(2)])
        // Not "overlapping paths": they are two different children.
        let multi = await h.send("PATCH", "/.json", #"{"m/caf\u00e9/a":1,"m/cafe\u0301":{"b":2}}"#)
        #expect(multi.status == 200, "\(multi.text)")
        #expect(await h.send("GET", "/m/\(Self.nfcURL)/a.json").text == "1")
        #expect(await h.send("GET", "/m/\(Self.nfdURL)/b.json").text == "2")
    }

    @Test func keyQueriesListBothTwinsInCodeUnitOrder() async {
        _ = await h.send("PUT", "/k.json", #"{"cafe\u0301":2,"caf\u00e9":1,"cafe":0}"#)
        let query = await h.send("GET", #"/k.json?orderBy="$key"&limitToFirst=3"#)
        #expect(query.status == 200, "\(query.text)")
        // Firebase order of non-integer keys is by UTF-16 code units: "cafe" < "cafe\u{301}" < "caf\u{E9}".
        let keys = (try? JSONParser.parse(Array(query.text.utf8)))?.objectValue.map { FirebaseKeyOrder.sorted($0.keys.strings) } ?? []
        #expect(keys.map { Array($0.utf8) } == [Array("cafe".utf8), Array(Self.nfd.utf8), Array(Self.nfc.utf8)])
    }

    @Test func rulesForOneTwinDoNotGrantTheOther() async throws {
        let rules = #"{"rules": {"r": {"caf\u00e9": {".read": true, ".write": true}}}}"#
        let h = try RouterHarness(policy: RulesAccessPolicy(rules: try RuleSet.compile(rules)))
        #expect(await h.send("PUT", "/r/\(Self.nfcURL).json", "1").status == 200)
        #expect(await h.send("PUT", "/r/\(Self.nfdURL).json", "2").status == 401)
        #expect(await h.send("GET", "/r/\(Self.nfdURL).json").status == 401)
        #expect(await h.send("GET", "/r/\(Self.nfcURL).json").text == "1")
    }
}

/// The same over a real socket: a stream on one twin never sees the other's writes.
@Suite struct CodeUnitKeyStreamTests {
    @Test func aStreamOnOneTwinIgnoresTheOther() async throws {
        let server = try LiveServer()
        let stream = try server.stream("/s/\(CodeUnitKeyTests.nfcURL).json")
        #expect(try stream.nextEvent() == ReceivedEvent(name: "put", id: 0, data: #"{"path":"/","data":null}"#))
        _ = try server.request("PUT", "/s/\(CodeUnitKeyTests.nfdURL).json", #""twin""#)
        _ = try server.request("PUT", "/s/\(CodeUnitKeyTests.nfcURL).json", #""mine""#)
        let next = try stream.nextEvent()
        #expect(next.name == "put")
        #expect(next.data == #"{"path":"/","data":"mine"}"#)
        await server.stop()
    }
}
