@testable import hearth_load
import Testing

// The load generator's pure parts, from literals: marker scan, frame heads, chunked
// decoding, response heads, wire answers, SSE event names, percentiles, result lines.

@Suite struct MarkerScanTests {
    let scanner = MarkerScanner(prefix: Array("bmab12cd34-".utf8))

    @Test func findsTheSequenceAfterThePrefix() {
        let push = #"{"t":"d","d":{"a":"d","b":{"p":"users/u/favorites/-N1","d":{"note":"bmab12cd34-417.","id":"live-417"}}}}"#
        #expect(scanner.sequence(in: Array(push.utf8)) == 417)
        let event = "event: put\nid: 9\ndata: {\"path\":\"/-N1\",\"data\":{\"note\":\"bmab12cd34-0.\"}}"
        #expect(scanner.sequence(in: Array(event.utf8)) == 0)
    }

    @Test func takesTheFirstOccurrenceAndNeedsDigits() {
        #expect(scanner.sequence(in: Array("bmab12cd34-5. bmab12cd34-6.".utf8)) == 5)
        #expect(scanner.sequence(in: Array("bmab12cd34-x".utf8)) == nil)
        #expect(scanner.sequence(in: Array("bmab12cd3-5 bmab12cd34".utf8)) == nil)
        #expect(scanner.sequence(in: Array("event: keep-alive\ndata: null".utf8)) == nil)
        #expect(scanner.sequence(in: []) == nil)
        // a partial prefix just before a real one
        #expect(scanner.sequence(in: Array("bmab1bmab12cd34-77.".utf8)) == 77)
    }

    @Test func refusesMoreDigitsThanTheLimit() {
        let long = "bmab12cd34-" + String(repeating: "9", count: Limits.maxMarkerDigits + 1)
        #expect(scanner.sequence(in: Array(long.utf8)) == nil)
    }

    @Test func findOffsets() {
        let haystack = Array("ab\n\ncd\n\n".utf8)
        haystack.withUnsafeBytes { raw in
            #expect(MarkerScanner.find(Array("\n\n".utf8), in: raw) == 2)
            #expect(MarkerScanner.find(Array("\n\n".utf8), in: raw, from: 3) == 6)
            #expect(MarkerScanner.find(Array("\n\n".utf8), in: raw, from: 7) == nil)
        }
    }
}

@Suite struct FrameHeadTests {
    func parse(_ bytes: [UInt8]) -> FrameHead { bytes.withUnsafeBytes { FrameHead.parse($0) } }

    @Test func shortAndExtendedLengths() {
        #expect(parse([0x81]) == .incomplete)
        #expect(parse([0x81, 0x05, 0x68]) == .frame(opcode: 1, final: true, headLength: 2, payloadLength: 5))
        #expect(parse([0x01, 0x7E, 0x01]) == .incomplete)
        #expect(parse([0x01, 0x7E, 0x01, 0x00]) == .frame(opcode: 1, final: false, headLength: 4, payloadLength: 256))
        #expect(parse([0x80, 0x7F, 0, 0, 0, 0, 0, 1, 0, 0]) == .frame(opcode: 0, final: true, headLength: 10, payloadLength: 65_536))
        #expect(parse([0x89, 0x00]) == .frame(opcode: 9, final: true, headLength: 2, payloadLength: 0))
    }

    @Test func violations() {
        #expect(parse([0x81, 0x85, 1, 2, 3, 4]) == .invalid("masked frame from the server"))
        #expect(parse([0xC1, 0x00]) == .invalid("reserved bits set"))
        #expect(parse([0x09, 0x00]) == .invalid("bad control frame"))
        #expect(parse([0x81, 0x7F, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]) != .incomplete)
        let over = Limits.maxMessageBytes + 1
        let head: [UInt8] = [0x81, 0x7F] + (0..<8).map { UInt8((over >> (56 - 8 * $0)) & 0xFF) }
        #expect(parse(head) == .invalid("frame of \(over) bytes"))
    }
}

@Suite struct ChunkedDecoderTests {
    func decode(_ pieces: [String]) throws -> (String, Bool) {
        var decoder = ChunkedDecoder()
        var out: [UInt8] = []
        for piece in pieces {
            try Array(piece.utf8).withUnsafeBytes { raw in
                try decoder.feed(raw) { out.append(contentsOf: $0) }
            }
        }
        return (String(decoding: out, as: UTF8.self), decoder.finished)
    }

    @Test func wholeAndSplitAnywhere() throws {
        let body = "5\r\nhello\r\na;ext=1\r\n, world!!!\r\n0\r\n\r\n"
        #expect(try decode([body]) == ("hello, world!!!", true))
        for cut in 1..<body.utf8.count {
            let bytes = Array(body.utf8)
            let pieces = [String(decoding: bytes[..<cut], as: UTF8.self), String(decoding: bytes[cut...], as: UTF8.self)]
            #expect(try decode(pieces) == ("hello, world!!!", true))
        }
        #expect(try decode(["3\r\nabc\r\n"]) == ("abc", false))
        // the body ends at the blank line after the zero-size chunk (and any trailers), not before
        #expect(try decode(["3\r\nabc\r\n0\r\n"]) == ("abc", false))
        #expect(try decode(["3\r\nabc\r\n0\r\nX-Trailer: 1\r\n"]) == ("abc", false))
        #expect(try decode(["3\r\nabc\r\n0\r\nX-Trailer: 1\r\n\r\n"]) == ("abc", true))
    }

    @Test func badSizeLines() {
        #expect(throws: LoadError.self) { try decode(["zz\r\n"]) }
        #expect(throws: LoadError.self) { try decode(["\r\n"]) }
        #expect(throws: LoadError.self) { try decode([String(repeating: "f", count: Limits.maxChunkSizeDigits + 1) + "\r\n"]) }
    }
}

@Suite struct ResponseAndMessageTests {
    func head(_ text: String) throws -> ResponseHead? {
        try Array(text.utf8).withUnsafeBytes { raw in try ResponseHead.parse(raw) }
    }

    @Test func responseHeads() throws {
        let ok = try head("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\ncontent-length: 27\r\n\r\n{\"name\"")
        #expect(ok == ResponseHead(status: 200, length: 71, contentLength: 27, chunked: false))
        let stream = try head("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
        #expect(stream?.chunked == true)
        #expect(try head("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n")  == nil)
        #expect(throws: LoadError.self) { try head("SSH-2.0\r\n\r\n") }
        #expect(throws: LoadError.self) { try head("HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n") }
        #expect(throws: LoadError.self) { try head("HTTP/1.1 200 OK\r\n" + String(repeating: "x", count: Limits.maxResponseHeadBytes)) }
    }

    func classify(_ text: String) -> WireControl { Array(text.utf8).withUnsafeBytes { WireControl.classify($0) } }

    @Test func wireControlMessages() {
        #expect(classify(#"{"t":"c","d":{"t":"h","d":{"ts":1,"v":"5","h":"127.0.0.1:1","s":"x"}}}"#) == .handshake)
        #expect(classify(#"{"t":"d","d":{"r":2,"b":{"s":"ok","d":""}}}"#) == .answer(number: 2, status: "ok"))
        #expect(classify(#"{"d":{"b":{"d":"bad token","s":"invalid_token"},"r":1},"t":"d"}"#) == .answer(number: 1, status: "invalid_token"))
        #expect(classify(#"{"t":"d","d":{"a":"d","b":{"p":"users/u/favorites","d":null}}}"#) == .other)
    }

    @Test func sseEventNames() {
        func name(_ text: String) -> String? { Array(text.utf8).withUnsafeBytes { sseEventName($0).map(String.init) } }
        #expect(name("event: put\nid: 1\ndata: {}") == "put")
        #expect(name("event:keep-alive\ndata: null") == "keep-alive")
        #expect(name("data: only") == nil)
    }
}

@Suite struct FigureTests {
    @Test func percentileAsHarnessPy() {
        // harness.py pct: index round(p/100*n + 0.5) - 1 with Python's round half to even.
        let ten = (1...10).map(Double.init)
        #expect(percentile(ten, 50) == 6)   // round(5.5) = 6
        #expect(percentile(ten, 99) == 10)
        let eleven = (1...11).map(Double.init)
        #expect(percentile(eleven, 50) == 6)  // round(6.0) = 6
        let four = [1.0, 2, 3, 4]
        #expect(percentile(four, 50) == 2)  // round(2.5) = 2 (half to even)
        #expect(percentile([], 50) == nil)
        #expect(percentile([7], 0) == 7)
    }

    @Test func resultLineIsSortedJSON() {
        let line = jsonLine(["b": .number(1.5), "a": .integer(3), "c": .null, "d": .strings(["x\"y"]), "e": .string("t\n")])
        #expect(line == #"{"a": 3, "b": 1.5, "c": null, "d": ["x\"y"], "e": "t\n"}"#)
        #expect(rounded(12.345678, 2) == 12.35)
    }

    @Test func requestsAsWirePy() {
        #expect(String(decoding: Requests.listen(path: "/users/u/favorites"), as: UTF8.self)
                == #"{"t":"d","d":{"r":2,"a":"q","b":{"p":"/users/u/favorites","h":""}}}"#)
        #expect(Requests.path("/users/${uid}/favorites/${i}", uid: "u1", name: "c9-3") == "/users/u1/favorites/c9-3")
        #expect(base64(Array("hello".utf8)) == "aGVsbG8=")
        var masker = FrameMasker(seed: 7)
        let frame = masker.frame(opcode: FrameHead.text, Array("hi".utf8))
        #expect(frame.count == 2 + 4 + 2 && frame[0] == 0x81 && frame[1] == 0x82)
        #expect(frame[6] ^ frame[2] == UInt8(ascii: "h") && frame[7] ^ frame[3] == UInt8(ascii: "i"))
    }

    @Test func argumentsAreChecked() {
        #expect(throws: LoadError.self) { try Options.parse(["fanout", "--port", "1"]) }
        #expect(throws: LoadError.self) { try Options.parse(["fanout", "--port", "99999", "--subscribers", "1", "--uid", "u", "--token", "t"]) }
        #expect(throws: LoadError.self) { try Options.parse(["fanout", "--port", "1", "--subscribers", "1", "--uid", "u", "--token", "t", "--rate"]) }
        #expect(throws: LoadError.self) {
            try Options.parse(["fanout", "--port", "1", "--subscribers", "\(Limits.maxSubscribers + 1)", "--uid", "u", "--token", "t"])
        }
        #expect(throws: LoadError.self) { try Options.parse(["fanout", "--port", "1", "--subscribers", "1", "--uid", "u", "--token", "t", "--paths", "own"]) }
        let options = try? Options.parse(["fanout", "--port", "1", "--subscribers", "3", "--uid", "u", "--token", "t", "--rate", "10", "--duration", "1.25"])
        #expect(options?.writeCount == 12)  // round(12.5) = 12, as Python
    }
}

@Suite struct LimitTests {
    let base = ["fanout", "--port", "1", "--subscribers", "10", "--uid", "u", "--token", "t"]

    /// Each named limit: at the limit accepted, one past it refused with a message.
    @Test(arguments: [
        ("--threads", "\(Limits.maxThreads)", "\(Limits.maxThreads + 1)"),
        ("--sources", "\(Limits.maxSourceAddresses)", "\(Limits.maxSourceAddresses + 1)"),
        ("--rate", "\(Limits.maxRate)", "\(Limits.maxRate + 1)"),
        ("--duration", "\(Limits.maxDurationSeconds)", "\(Limits.maxDurationSeconds + 1)"),
        ("--writer-conns", "\(Limits.maxWriterConnections)", "\(Limits.maxWriterConnections + 1)"),
        ("--open-conc", "\(Limits.maxOpenConcurrency)", "\(Limits.maxOpenConcurrency + 1)"),
        ("--drain", "\(Limits.maxWaitSeconds)", "\(Limits.maxWaitSeconds + 1)"),
    ])
    func argumentLimits(name: String, atLimit: String, overLimit: String) throws {
        _ = try Options.parse(base + [name, atLimit, "--rate", name == "--rate" ? atLimit : "0"])
        #expect(throws: LoadError.self) { try Options.parse(base + [name, overLimit]) }
    }

    @Test func recordedEventsLimit() throws {
        // subscribers x writes must fit Limits.maxRecordedEvents
        let writes = Limits.maxRecordedEvents / 100_000 - 1
        _ = try Options.parse(["fanout", "--port", "1", "--subscribers", "100000", "--uid", "u", "--token", "t",
                               "--rate", "\(writes)", "--duration", "1"])
        #expect(throws: LoadError.self) {
            try Options.parse(["fanout", "--port", "1", "--subscribers", "100000", "--uid", "u", "--token", "t",
                               "--rate", "\(writes + 2)", "--duration", "1"])
        }
    }

    @Test func badValuesAreRefused() {
        for extra in [["--transport", "ws"], ["--stage", "x"], ["--host", "10.0.0.1"], ["--uid", "a/b"], ["--token", "has space"],
                      ["--path", "no-slash"], ["--rate", "nan"], ["--bogus"]] {
            #expect(throws: LoadError.self) { try Options.parse(base + extra) }
        }
    }
}
