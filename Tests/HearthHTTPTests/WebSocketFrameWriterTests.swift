import Testing
@testable import HearthHTTP

@Suite("WebSocket: frame writer, close codes, UTF-8")
struct WebSocketFrameWriterTests {
    @Test func serverFramesAreUnmaskedInTheShortestLengthForm() {
        // RFC 6455 §5.7: "A single-frame unmasked text message".
        #expect(WebSocketFrameWriter.frame(.text, [UInt8]("Hello")) == [0x81, 0x05, 0x48, 0x65, 0x6C, 0x6C, 0x6F])
        let medium = WebSocketFrameWriter.frame(.binary, [UInt8](repeating: 0, count: 256))
        #expect(Array(medium.prefix(4)) == [0x82, 0x7E, 0x01, 0x00])
        #expect(medium.count == 260)
        let large = WebSocketFrameWriter.frame(.binary, [UInt8](repeating: 0, count: 65_536))
        #expect(Array(large.prefix(10)) == [0x82, 0x7F, 0, 0, 0, 0, 0, 0x01, 0x00, 0x00])
        #expect(WebSocketFrameWriter.frame(.text, [UInt8](repeating: 0, count: 125))[1] == 125)
        #expect(WebSocketFrameWriter.frame(.text, [UInt8](repeating: 0, count: 65_535))[1] == 126)
    }

    @Test func whatTheWriterWritesTheParserReadsBack() {
        // The parser wants masked frames; mask the writer's output as a client would.
        for payload in [[UInt8](), [UInt8]("hi"), [UInt8](repeating: 0x41, count: 70_000)] {
            let frame = WebSocketFrameWriter.frame(.text, payload)
            let headerLength = payload.count < 126 ? 2 : payload.count <= 0xFFFF ? 4 : 10
            var masked = Array(frame[0..<headerLength])
            masked[1] |= 0x80
            masked += [0, 0, 0, 0] + frame[headerLength...]  // a zero mask leaves the payload as is
            #expect(parse(masked).events == [.text(payload)])
        }
    }

    @Test func closeFramesFitTheControlLimitAtACharacterBoundary() {
        #expect(WebSocketFrameWriter.close(.normal) == [0x88, 0x02, 0x03, 0xE8])
        let long = WebSocketFrameWriter.close(.policyViolation, reason: String(repeating: "é", count: 100))
        #expect(Int(long[1]) <= WebSocketLimits.maxControlPayloadBytes)
        #expect(Int(long[1]) == 124)  // 2 + 61 two-byte characters: the 62nd would not fit
        #expect(UTF8Validator.isValid(long[4...]))
    }

    @Test func closeCodesAllowedOnTheWire() {
        let allowed: [UInt16] = [1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 1012, 1013, 1014, 3000, 4999]
        let refused: [UInt16] = [0, 999, 1004, 1005, 1006, 1015, 1016, 2999, 5000, 65535]
        for code in allowed { #expect(WebSocketCloseCode(rawValue: code).isValidOnTheWire, "\(code)") }
        for code in refused { #expect(!WebSocketCloseCode(rawValue: code).isValidOnTheWire, "\(code)") }
    }

    @Test func utf8ValidatorAgreesWithSwiftsDecoderOnEveryShortSequence() {
        // Every 1- and 2-byte input, and 3-byte inputs from the interesting lead bytes,
        // judged against Swift's own strict decoder.
        func swiftSays(_ bytes: [UInt8]) -> Bool { String(validating: bytes, as: UTF8.self) != nil }
        for a in 0...255 {
            #expect(UTF8Validator.isValid([UInt8(a)]) == swiftSays([UInt8(a)]))
            for b in 0...255 {
                let pair = [UInt8(a), UInt8(b)]
                if UTF8Validator.isValid(pair) != swiftSays(pair) { Issue.record("\(pair)"); return }
            }
        }
        for a: UInt8 in [0xE0, 0xE1, 0xED, 0xEE, 0xEF, 0xF0, 0xF4] {
            for b in 0x70...0xC5 {
                for c in 0x70...0xC5 {
                    let triple = [a, UInt8(b), UInt8(c)]
                    if UTF8Validator.isValid(triple) != swiftSays(triple) { Issue.record("\(triple)"); return }
                }
            }
        }
    }
}
