import HearthWire
import Testing

/// The long-poll framing from literals (docs/protocol/wire.md §8; JS SDK
/// BrowserPollConnection.ts).
@Suite struct LongPollFramingTests {
    typealias Segment = LongPollSegments.Segment

    @Test func scriptsCallTheSDKsCallbacks() {
        let start = String(decoding: LongPollScript.start(callback: "3", id: "ab12", password: "cd34"), as: UTF8.self)
        #expect(start == "(window.pLPCommand3||parent.pLPCommand3)('start','ab12','cd34');\n")
        let data = String(decoding: LongPollScript.data(callback: "3", number: 7, messages: [Array(#"{"t":"c"}"#.utf8), Array("{}".utf8)]), as: UTF8.self)
        #expect(data == #"(window.pRTLPCB3||parent.pRTLPCB3)(7,[{"t":"c"},{}]);"# + "\n")
        #expect(String(decoding: LongPollScript.close(callback: "3", after: nil), as: UTF8.self) == "(window.pLPCommand3||parent.pLPCommand3)('close');\n")
        #expect(String(decoding: LongPollScript.close(callback: "3", after: 4), as: UTF8.self) == "(window.pLPCommand3||parent.pLPCommand3)('close',4);\n")
        let page = String(decoding: LongPollScript.disconnectFrame(path: "/.lp", id: "ab", password: "cd"), as: UTF8.self)
        #expect(page.contains("/.lp?disconn=t&id=ab&pw=cd"))
    }

    @Test(arguments: ["1", "1234567890123456"])
    func callbackIDsAreDigits(text: String) {
        #expect(LongPollScript.isCallbackID(Substring(text)))
    }

    @Test(arguments: ["", "a", "1);alert(1", "12345678901234567", "１"])
    func otherCallbackIDsAreRefused(text: String) {
        #expect(!LongPollScript.isCallbackID(Substring(text)))
    }

    @Test func segmentsAreParsedInOrderOfTheirIndex() throws {
        let parameters: [Substring: Substring] = ["id": "x", "seg0": "4", "ts0": "2", "d0": "ab", "seg1": "5", "ts1": "2", "d1": "cd", "seg3": "9"]
        #expect(try LongPollSegments.parse(parameters) == [Segment(number: 4, total: 2, text: "ab"), Segment(number: 5, total: 2, text: "cd")])
        #expect(try LongPollSegments.parse(["id": "x"]) == [])
    }

    @Test(arguments: [["seg0": "x", "ts0": "1", "d0": "a"], ["seg0": "1", "d0": "a"], ["seg0": "1", "ts0": "0", "d0": "a"],
                      ["seg0": "-1", "ts0": "1", "d0": "a"], ["seg0": "1", "ts0": "1"]] as [[Substring: Substring]])
    func malformedSegmentsAreRefused(parameters: [Substring: Substring]) {
        #expect(throws: LongPollError.malformedSegment) { try LongPollSegments.parse(parameters) }
    }

    @Test func messagesAreJoinedInSegmentOrderWhateverTheArrivalOrder() throws {
        var segments = LongPollSegments(maxHeldBytes: 10_000)
        // Message A is segments 0-2, message B is segment 3; two polls crossed.
        #expect(try segments.take(Segment(number: 1, total: 3, text: "bb")) == [])
        #expect(try segments.take(Segment(number: 3, total: 1, text: "BB")) == [])
        #expect(try segments.take(Segment(number: 0, total: 3, text: "aa")) == [])
        #expect(try segments.take(Segment(number: 2, total: 3, text: "cc")) == ["aabbcc", "BB"])
        #expect(segments.heldBytes == 0)
        // A segment taken before (a poll loaded twice) is ignored.
        #expect(try segments.take(Segment(number: 2, total: 3, text: "cc")) == [])
        #expect(try segments.take(Segment(number: 4, total: 1, text: "dd")) == ["dd"])
    }

    @Test func heldSegmentsAreBounded() throws {
        var segments = LongPollSegments(maxHeldBytes: 2 * (100 + LongPollSegments.segmentOverhead))
        _ = try segments.take(Segment(number: 1, total: 4, text: String(repeating: "a", count: 100)))
        _ = try segments.take(Segment(number: 2, total: 4, text: String(repeating: "a", count: 100)))
        #expect(throws: LongPollError.tooMuchHeld) {
            try segments.take(Segment(number: 3, total: 4, text: "a"))
        }
        // A message announced in more segments than could ever be held, at once.
        var fresh = LongPollSegments(maxHeldBytes: 1000)
        #expect(throws: LongPollError.tooMuchHeld) {
            try fresh.take(Segment(number: 0, total: Int.max, text: "a"))
        }
    }
}
