import Testing
@testable import HearthHTTP

/// The frame parser fed from byte literals (RFC 6455 §5), as `HTTPRequestParser` is.
@Suite("WebSocket: frame parser")
struct WebSocketFrameParserTests {
    /// A large frame that ends the buffer becomes the payload in place (no copy): its bytes
    /// come out unmasked and whole, fed at once or in pieces.
    @Test func aLargeFrameIsTakenFromTheBufferInPlace() {
        let payload = (0..<(100 * 1024)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        let frame = clientFrame(0x2, payload, mask: [0x9C, 0x01, 0x7E, 0xA5])
        #expect(parse(frame).events == [.binary(payload)])
        var parser = WebSocketFrameParser(limits: WebSocketLimits())
        parser.feed(Array(frame.prefix(70_000)))
        #expect(parser.next() == nil)
        #expect(parser.heldByteCount >= 70_000)
        parser.feed(Array(frame.dropFirst(70_000)))
        guard case .success(.binary(let bytes))? = parser.next() else { Issue.record("no message"); return }
        #expect(bytes == payload)
        #expect(parser.heldByteCount == 0)
    }

    @Test func theRFCsMaskedHelloIsOneTextMessage() {
        // RFC 6455 §5.7: "A single-frame masked text message".
        let bytes: [UInt8] = [0x81, 0x85, 0x37, 0xFA, 0x21, 0x3D, 0x7F, 0x9F, 0x4D, 0x51, 0x58]
        #expect(parse(bytes).events == [.text([UInt8]("Hello"))])
    }

    @Test func theRFCsMaskedPongIsAPong() {
        let bytes: [UInt8] = [0x8A, 0x85, 0x37, 0xFA, 0x21, 0x3D, 0x7F, 0x9F, 0x4D, 0x51, 0x58]
        #expect(parse(bytes).events == [.pong([UInt8]("Hello"))])
    }

    @Test func fragmentsAreJoinedAndControlFramesMayComeBetweenThem() {
        let bytes = clientFrame(0x1, [UInt8]("He"), fin: false)
            + clientFrame(0x9, [UInt8]("p"))
            + clientFrame(0x0, [UInt8]("l"), fin: false)
            + clientFrame(0x0, [UInt8]("lo"))
        #expect(parse(bytes).events == [.ping([UInt8]("p")), .text([UInt8]("Hello"))])
    }

    @Test func anEmptyFirstFragmentStillStartsAMessage() {
        let bytes = clientFrame(0x2, [], fin: false) + clientFrame(0x0, [1, 2]) + clientFrame(0x2, [3])
        #expect(parse(bytes).events == [.binary([1, 2]), .binary([3])])
    }

    @Test func bytesArrivingOneAtATimeGiveTheSameEvents() {
        let payload = [UInt8](repeating: 0x61, count: 70_000)  // a 64-bit length form
        let bytes = clientFrame(0x1, Array(payload[0..<300]), fin: false) + clientFrame(0x0, Array(payload[300...]))
            + clientFrame(0x8, [0x03, 0xE8] + [UInt8]("bye"))
        var parser = WebSocketFrameParser(limits: WebSocketLimits())
        var events: [WebSocketEvent] = []
        for byte in bytes {
            parser.feed([byte])
            while let result = parser.next() {
                guard case .success(let event) = result else { Issue.record("\(result)"); return }
                events.append(event)
            }
        }
        #expect(events == [.text(payload), .close(code: .normal, reason: "bye")])
        #expect(parser.bufferedByteCount == 0)
    }

    @Test func sixteenAndSixtyFourBitLengthsAreRead() {
        let medium = [UInt8](repeating: 7, count: 256), large = [UInt8](repeating: 9, count: 65_536)
        #expect(parse(clientFrame(0x2, medium)).events == [.binary(medium)])
        #expect(parse(clientFrame(0x2, large)).events == [.binary(large)])
        // A length in a longer form than needed is still read (receivers need not insist).
        #expect(parse(clientFrame(0x2, [1, 2, 3], lengthForm: 64)).events == [.binary([1, 2, 3])])
    }

    @Test func closeFramesCarryTheirCodeAndReason() {
        #expect(parse(clientFrame(0x8, [])).events == [.close(code: nil, reason: "")])
        #expect(parse(clientFrame(0x8, [0x0F, 0xA0] + [UInt8]("app"))).events == [.close(code: WebSocketCloseCode(rawValue: 4000), reason: "app")])
    }

    @Test(arguments: [
        (clientFrame(0x1, [UInt8]("x"), mask: nil), WebSocketError.unmaskedFrame),
        (clientFrame(0x1, [UInt8]("x"), rsv: 0b100), .reservedBitsSet),
        (clientFrame(0x1, [UInt8]("x"), rsv: 0b001), .reservedBitsSet),
        (clientFrame(0x3, []), .unknownOpcode),
        (clientFrame(0xB, []), .unknownOpcode),
        (clientFrame(0x9, [], fin: false), .fragmentedControlFrame),
        (clientFrame(0x9, [UInt8](repeating: 0, count: 126)), .controlFrameTooLong),
        (clientFrame(0x0, [UInt8]("x")), .unexpectedContinuation),
        (clientFrame(0x1, [UInt8]("a"), fin: false) + clientFrame(0x1, [UInt8]("b")), .expectedContinuation),
        ([0x82, 0xFF, 0x80, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0], .invalidLength),
        (clientFrame(0x8, [0x03]), .invalidClosePayload),
        (clientFrame(0x8, [0x03, 0xED]), .invalidCloseCode),  // 1005 never appears on the wire
        (clientFrame(0x8, [0x03, 0xE7]), .invalidCloseCode),  // 999
        (clientFrame(0x8, [0x13, 0x88]), .invalidCloseCode),  // 5000
        (clientFrame(0x8, [0x03, 0xE8, 0xFF]), .invalidUTF8),
        (clientFrame(0x1, [0xC0, 0x80]), .invalidUTF8),  // overlong NUL
        (clientFrame(0x1, [0xED, 0xA0, 0x80]), .invalidUTF8),  // a surrogate
        (clientFrame(0x1, [0xF4, 0x90, 0x80, 0x80]), .invalidUTF8),  // past U+10FFFF
        (clientFrame(0x1, [0xE2, 0x82]), .invalidUTF8),  // cut off at the message's end
    ] as [([UInt8], WebSocketError)])
    func refusals(bytes: [UInt8], expected: WebSocketError) {
        let result = parse(bytes)
        #expect(result.error == expected)
        #expect(result.events.isEmpty)
    }

    @Test func everyRefusalHasItsCloseCode() {
        #expect(WebSocketError.invalidUTF8.closeCode == .invalidPayload)
        #expect(WebSocketError.messageTooBig.closeCode == .messageTooBig)
        for error in WebSocketError.allCases where error != .invalidUTF8 && error != .messageTooBig {
            #expect(error.closeCode == .protocolError, "\(error)")
        }
    }

    @Test func invalidUTF8FailsAtTheFragmentThatBreaksIt() {
        // A sequence split across fragments is fine; a bad byte fails before the message ends.
        let euro: [UInt8] = [0xE2, 0x82, 0xAC]
        let split = clientFrame(0x1, [euro[0]], fin: false) + clientFrame(0x0, Array(euro[1...]))
        #expect(parse(split).events == [.text(euro)])
        var parser = WebSocketFrameParser(limits: WebSocketLimits())
        parser.feed(clientFrame(0x1, [UInt8]("ok"), fin: false) + clientFrame(0x0, [0xFF], fin: false))
        #expect(parser.next().flatMap { try? $0.get() } == nil)
        #expect(parser.failure == .invalidUTF8)
    }

    @Test func aMessageOverTheLimitIsRefusedFromItsHeader() {
        var limits = WebSocketLimits()
        limits.maxMessageBytes = 1000
        #expect(parse(clientFrame(0x2, [UInt8](repeating: 1, count: 1000)), limits: limits).events.count == 1)
        // Announced: refused before a single payload byte arrives.
        var parser = WebSocketFrameParser(limits: limits)
        parser.feed(Array(clientFrame(0x2, [UInt8](repeating: 1, count: 1001)).prefix(8)))
        guard case .failure(.messageTooBig)? = parser.next() else { Issue.record("not refused from the header"); return }
        // Fragments count together.
        let fragments = clientFrame(0x2, [UInt8](repeating: 1, count: 600), fin: false) + clientFrame(0x0, [UInt8](repeating: 1, count: 401))
        #expect(parse(fragments, limits: limits).error == .messageTooBig)
        // A 64-bit length near 2^63 does not overflow the check.
        #expect(parse([0x82, 0xFF, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 1, 2, 3, 4], limits: limits).error == .messageTooBig)
    }

    @Test func afterAnErrorNothingMoreIsHandedOut() {
        var parser = WebSocketFrameParser(limits: WebSocketLimits())
        parser.feed(clientFrame(0x3, []) + clientFrame(0x1, [UInt8]("later")))
        #expect(parser.next() == .failure(.unknownOpcode))
        #expect(parser.next() == nil)
        parser.feed(clientFrame(0x1, [UInt8]("more")))
        #expect(parser.next() == nil)
    }

    @Test func theUnmaskLoopHandlesEveryRemainder() {
        for count in 0..<9 {
            let payload = (0..<count).map { UInt8($0 * 17) }
            #expect(parse(clientFrame(0x2, payload, mask: [0xA1, 0xB2, 0xC3, 0xD4])).events == [.binary(payload)])
        }
    }
}
