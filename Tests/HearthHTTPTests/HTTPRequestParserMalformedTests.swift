import Testing
@testable import HearthHTTP

@Suite("HTTPRequestParser: malformed input")
struct HTTPRequestParserMalformedTests {
    @Test(arguments: [
        ("G@T / HTTP/1.1\r\nHost: h\r\n\r\n", HTTPParseError.invalidMethod),
        (" / HTTP/1.1\r\nHost: h\r\n\r\n", .invalidMethod),
        ("GET\t/ HTTP/1.1\r\nHost: h\r\n\r\n", .invalidMethod),
        ("GET\0 / HTTP/1.1\r\nHost: h\r\n\r\n", .invalidMethod),
        ("GET\r\nHost: h\r\n\r\n", .invalidRequestLine),
        ("GET /\r\nHost: h\r\n\r\n", .invalidRequestLine),
        ("GET  / HTTP/1.1\r\nHost: h\r\n\r\n", .invalidTarget),
        ("GET /a\0b HTTP/1.1\r\nHost: h\r\n\r\n", .invalidTarget),
        ("GET /\u{7F} HTTP/1.1\r\nHost: h\r\n\r\n", .invalidTarget),
        ("GET / HTTP/1.1 \r\nHost: h\r\n\r\n", .invalidVersion),
        ("GET / http/1.1\r\nHost: h\r\n\r\n", .invalidVersion),
        ("GET / HTTP/1\r\nHost: h\r\n\r\n", .invalidVersion),
        ("GET / HTTP/1.x\r\nHost: h\r\n\r\n", .invalidVersion),
        ("GET / FOO/1.1\r\nHost: h\r\n\r\n", .invalidVersion),
        ("GET / HTTP/2.0\r\nHost: h\r\n\r\n", .unsupportedVersion),
        ("GET / HTTP/0.9\r\nHost: h\r\n\r\n", .unsupportedVersion),
        ("GET / HTTP/1.1\nHost: h\r\n\r\n", .invalidLineEnding),
        ("GET / HTTP/1.1\r\nHost: h\n\n", .invalidLineEnding),
        ("\nGET / HTTP/1.1\r\nHost: h\r\n\r\n", .invalidLineEnding),
        ("GET / HTTP/1.1\r\nHost: h\r\nX: a\rb\r\n\r\n", .invalidHeaderValue),
        ("GET / HTTP/1.1\r\nHost: h\r\nX: a\0b\r\n\r\n", .invalidHeaderValue),
        ("GET / HTTP/1.1\r\nHost: h\r\nX: a\u{1}\r\n\r\n", .invalidHeaderValue),
        ("GET / HTTP/1.1\r\nHost: h\r\nX\0: a\r\n\r\n", .invalidHeaderName),
        ("GET / HTTP/1.1\r\nHost: h\r\nX : a\r\n\r\n", .invalidHeaderName),
        ("GET / HTTP/1.1\r\nHost: h\r\n: a\r\n\r\n", .invalidHeaderName),
        ("GET / HTTP/1.1\r\nHost: h\r\nX(y): a\r\n\r\n", .invalidHeaderName),
        ("GET / HTTP/1.1\r\nHost: h\r\nNoColonHere\r\n\r\n", .missingColon),
        ("GET / HTTP/1.1\r\nHost: h\r\nX: a\r\n  folded\r\n\r\n", .obsoleteLineFolding),
        ("GET / HTTP/1.1\r\nHost: h\r\nX: a\r\n\tfolded\r\n\r\n", .obsoleteLineFolding),
        ("GET / HTTP/1.1\r\n\r\n", .invalidHost),
        ("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", .invalidHost),
        ("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: -1\r\n\r\n", .invalidContentLength),
        ("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: abc\r\n\r\n", .invalidContentLength),
        ("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1.5\r\n\r\n", .invalidContentLength),
        ("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: +3\r\n\r\n", .invalidContentLength),
        ("POST / HTTP/1.1\r\nHost: h\r\nContent-Length:\r\n\r\n", .invalidContentLength),
        ("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 0x10\r\n\r\n", .invalidContentLength),
        ("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n", .conflictingContentLength),
        ("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3, 4\r\n\r\n", .conflictingContentLength),
        ("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n",
         .contentLengthWithTransferEncoding),
        ("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", .unsupportedTransferCoding),
        ("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip\r\n\r\n", .invalidTransferEncoding),
        ("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked, gzip\r\n\r\n", .invalidTransferEncoding),
        ("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked, chunked\r\n\r\n", .invalidTransferEncoding),
        ("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding:\r\n\r\n", .invalidTransferEncoding),
        ("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", .invalidTransferEncoding),
        ("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", .invalidChunkSize),
        ("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n-1\r\n", .invalidChunkSize),
        ("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n\r\n", .invalidChunkSize),
        ("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n1 x\r\n", .invalidChunkSize),
        ("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n1;a\0\r\n", .invalidChunkSize),
        ("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n1234567890abcdef0\r\n", .invalidChunkSize),
        ("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nab\r\n", .invalidChunkTerminator),
        ("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\n", .invalidChunkTerminator),
        ("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n1\nab\r\n", .invalidLineEnding),
    ])
    func malformedRequestGivesTypedError(request: String, expected: HTTPParseError) {
        let events = parse(request)
        #expect(events.last == .error(expected), "\(events)")
        #expect(events.compactMap(\.error).count == 1)
    }

    @Test func everyErrorHasAClientOrServerErrorStatus() {
        for error in HTTPParseError.allCases {
            #expect([400, 413, 414, 417, 431, 501, 505].contains(error.status), "\(error)")
        }
    }

    @Test func statusesOfTheMainErrors() {
        #expect(HTTPParseError.invalidMethod.status == 400)
        #expect(HTTPParseError.unsupportedVersion.status == 505)
        #expect(HTTPParseError.unsupportedTransferCoding.status == 501)
        #expect(HTTPParseError.contentLengthWithTransferEncoding.status == 400)
    }

    @Test func nothingIsParsedAfterAnError() {
        let events = parse("GET / HTTP/1.1\r\nHost: h\r\nBad Header\r\n\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n")
        #expect(events == [.error(.missingColon)])
    }

    @Test func garbageNeverCrashesOrHangs() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<300 {
            let length = Int.random(in: 0..<300, using: &generator)
            var bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            if Bool.random(using: &generator) {
                bytes = Array("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n".utf8) + bytes
            }
            var parser = HTTPRequestParser()
            parser.feed(bytes)
            var steps = 0
            while parser.next() != nil {
                steps += 1
                #expect(steps < 1000)
                if steps >= 1000 { break }
            }
        }
    }
}
