import HearthJSON
import Testing
@testable import HearthWire

@Suite("Wire: envelopes and chunks")
struct WireCodecTests {
    static func decode(_ text: String) throws(WireError) -> WireInbound {
        try WireInbound.decode(Array(text.utf8))
    }

    @Test func requestsPingsAndControlMessagesDecode() throws {
        // Captured from the JS SDK (docs/protocol/wire.md §3.2, §4.7).
        #expect(try Self.decode(#"{"t":"d","d":{"r":1,"a":"s","b":{"c":{"sdk.node.12-18-0":1}}}}"#)
            == .request(number: 1, action: "s", body: .object(["c": .object(["sdk.node.12-18-0": .int(1)])])))
        #expect(try Self.decode(#"{"t":"d","d":{"r":0,"a":"q","b":{"p":"/a","h":""}}}"#)
            == .request(number: 0, action: "q", body: .object(["p": "/a", "h": ""])))
        #expect(try Self.decode(#"{"t":"d","d":{"a":"n","b":{"p":"/a"}}}"#) == .request(number: nil, action: "n", body: .object(["p": "/a"])))
        #expect(try Self.decode(#"{"t":"c","d":{"t":"p","d":{}}}"#) == .ping)
        #expect(try Self.decode(#"{"t":"c","d":{"t":"n","d":{}}}"#) == .control(type: "n"))
        #expect(try Self.decode(#"{"t":"d","d":{}}"#) == .ignored)
    }

    @Test(arguments: [
        "not json", "[1]", #"{"d":{}}"#, #"{"t":"d"}"#, #"{"t":"x","d":{}}"#, #"{"t":"c","d":"p"}"#,
        #"{"t":"d","d":{"r":-1,"a":"s","b":{}}}"#, #"{"t":"d","d":{"r":"1","a":"s","b":{}}}"#, #"{"t":"d","d":[]}"#,
    ])
    func malformedMessagesAreRefused(text: String) {
        #expect(throws: WireError.malformedMessage) { try Self.decode(text) }
    }

    /// A message nested deeper than the JSON limit is not silently dropped: its request
    /// number is found without parsing it, so the session can answer it.
    @Test func tooDeepMessagesKeepTheirRequestNumber() {
        let deep = String(repeating: "[", count: JSONParser.maxNesting + 1) + String(repeating: "]", count: JSONParser.maxNesting + 1)
        #expect(throws: WireError.nestingTooDeep(number: 7)) {
            try Self.decode(#"{"t":"d","d":{"r":7,"a":"p","b":{"p":"/a","d":"# + deep + "}}}")
        }
        #expect(throws: WireError.nestingTooDeep(number: 9)) {
            try Self.decode(#"{"t":"d","d":{"s":"\"r\":1","a":"p","b":{"d":"# + deep + #"},"r" : 9}}"#)
        }
        #expect(throws: WireError.nestingTooDeep(number: nil)) { try Self.decode(#"{"t":"d","d":{"b":"# + deep + "}}") }
        #expect(WireInbound.requestNumber(in: Array(#"{"t":"d","d":{"b":{"r":3},"r":4}}"#.utf8)) == 4)
        #expect(WireInbound.requestNumber(in: Array(#"{"r":1,"d":{"x":"\"r\":2"}}"#.utf8)) == nil)
        #expect(WireError.nestingTooDeep(number: 7).reason(WireLimits()) == "Data nested deeper than 512 levels")
    }

    @Test func reasonsAreWordsNotCaseNames() {
        let limits = WireLimits()
        #expect(WireError.messageTooBig.reason(limits) == "Message larger than 16 MiB; write less at once")
        #expect(WireError.invalidChunkCount.reason(limits) == "Message announced in more than 1025 chunks; it cannot fit 16 MiB")
        for error in [WireError.malformedMessage, .nestingTooDeep(number: nil), .invalidChunkCount, .messageTooBig] {
            #expect(error.reason(limits).utf8.count <= 123 && error.reason(limits).contains(" "))
        }
    }

    @Test func chunksAreJoinedAndKeepAlivesSkipped() throws {
        var assembler = WireFrameAssembler(limits: WireLimits())
        #expect(try assembler.take(Array("0".utf8)) == .keepAlive)
        #expect(try assembler.take(Array("3".utf8)) == .needMore)
        #expect(try assembler.take(Array(#"{"t":"d","#.utf8)) == .needMore)
        #expect(try assembler.take(Array("0".utf8)) == .needMore)  // inside a message, a chunk like any other
        #expect(try assembler.take(Array(#","d":{}}"#.utf8)) == .message(Array(#"{"t":"d",0,"d":{}}"#.utf8)))
        #expect(try assembler.take(Array(#"{"t":"d","d":{}}"#.utf8)) == .message(Array(#"{"t":"d","d":{}}"#.utf8)))
        // Seven digits are not a count: a message (that will not parse).
        #expect(try assembler.take(Array("1234567".utf8)) == .message(Array("1234567".utf8)))
    }

    @Test func limitsAreCrossed() throws {
        var limits = WireLimits()
        limits.maxMessageBytes = 10
        limits.maxChunks = 3
        var assembler = WireFrameAssembler(limits: limits)
        #expect(throws: WireError.invalidChunkCount) { try assembler.take(Array("4".utf8)) }
        // The default: as many chunks as a 16 MiB message of the SDKs' 16,384-character
        // chunks needs, refused when announced.
        #expect(WireLimits.defaultMaxChunks == 1_025)
        var sdk = WireFrameAssembler(limits: WireLimits())
        #expect(try sdk.take(Array("1025".utf8)) == .needMore)
        var over = WireFrameAssembler(limits: WireLimits())
        #expect(throws: WireError.invalidChunkCount) { try over.take(Array("1026".utf8)) }
        #expect(try assembler.take(Array("2".utf8)) == .needMore)
        #expect(try assembler.take(Array("123456".utf8)) == .needMore)
        #expect(throws: WireError.messageTooBig) { try assembler.take(Array("12345".utf8)) }
        var fresh = WireFrameAssembler(limits: limits)
        #expect(throws: WireError.messageTooBig) { try fresh.take(Array("{\"t\":\"d\",\"d\"}".utf8)) }
    }

    @Test func outboundMessagesAreTheSpecsShapes() {
        func text(_ message: WireOutbound) -> String { String(decoding: message.bytes, as: UTF8.self) }
        #expect(text(.handshake(timestamp: 1_700_000_000_000, host: "127.0.0.1:9000", sessionID: "s1"))
            == #"{"d":{"d":{"h":"127.0.0.1:9000","s":"s1","ts":1700000000000,"v":"5"},"t":"h"},"t":"c"}"#)
        #expect(text(.pong) == #"{"d":{"d":null,"t":"o"},"t":"c"}"#)
        #expect(text(.response(number: 0, status: "ok", data: JSONValue.object([JSONKey: JSONValue]()))) == #"{"d":{"b":{"d":{},"s":"ok"},"r":0},"t":"d"}"#)
        #expect(text(.push(action: "d", body: .object(["p": "/a", "d": .null]))) == #"{"d":{"a":"d","b":{"d":null,"p":"/a"}},"t":"d"}"#)
    }
}

/// Outbound chunking (docs/protocol/wire.md §2.1): long messages go as a count and chunks,
/// each valid UTF-8.
@Suite struct WireOutboundChunkTests {
    @Test func shortMessagesGoWhole() {
        let message = Array(#"{"t":"d","d":{}}"#.utf8)
        #expect(WireOutbound.frames(message) == [message])
        let exactly = [UInt8](repeating: UInt8(ascii: "a"), count: WireOutbound.chunkBytes)
        #expect(WireOutbound.frames(exactly) == [exactly])
    }

    @Test func longMessagesAreCountedAndCutAtCharacterBoundaries() {
        // 40,000 bytes of text with 2-, 3- and 4-byte characters: no chunk may split one.
        let text = String(repeating: "aé✓𝄞", count: 4_000)
        let message = Array(text.utf8)
        let frames = WireOutbound.frames(message)
        #expect(frames.count >= 4)
        #expect(Int(String(decoding: frames[0], as: UTF8.self)) == frames.count - 1)
        for chunk in frames.dropFirst() {
            #expect(chunk.count <= WireOutbound.chunkBytes)
            #expect(String(validating: chunk, as: UTF8.self) != nil)
        }
        #expect(Array(frames.dropFirst().joined()) == message)
        // The count frame is what the SDKs take as a count: 6 characters or fewer, digits.
        #expect(frames[0].count <= 4)
    }

    @Test func tooManyChunksGoWhole() {
        let message = [UInt8](repeating: UInt8(ascii: "x"), count: 100)
        #expect(WireOutbound.frames(message, chunkBytes: 4).count == 26)  // count + 25 chunks
        let huge = [UInt8](repeating: UInt8(ascii: "x"), count: 4 * (WireOutbound.maxChunks + 1))
        #expect(WireOutbound.frames(huge, chunkBytes: 4) == [huge])
    }
}
