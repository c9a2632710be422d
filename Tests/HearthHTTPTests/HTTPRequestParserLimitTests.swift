import Testing
@testable import HearthHTTP

@Suite("HTTPRequestParser: limits")
struct HTTPRequestParserLimitTests {
    static let small: HTTPLimits = {
        var limits = HTTPLimits()
        limits.maxRequestLineBytes = 64
        limits.maxHeaderBytes = 128
        limits.maxHeaderCount = 4
        limits.maxBodyBytes = 16
        return limits
    }()

    @Test func defaultsAreTheDocumentedOnes() {
        let limits = HTTPLimits()
        #expect(limits.maxRequestLineBytes == 8 * 1024)
        #expect(limits.maxHeaderBytes == 32 * 1024)
        #expect(limits.maxHeaderCount == 100)
        #expect(limits.maxBodyBytes == 16 * 1024 * 1024)
        #expect(limits.headerReadTimeout == 10)
        #expect(limits.idleTimeout == 60)
        #expect(limits.maxConnections == 16_000)
    }

    @Test func requestLineAtTheLimitPasses() {
        let line = "GET /" + String(repeating: "a", count: 64 - 14) + " HTTP/1.1"
        #expect(line.utf8.count == 64)
        #expect(parse(line + "\r\nHost: h\r\n\r\n", limits: Self.small).count == 1)
    }

    @Test func requestLineOverTheLimitIs414() {
        let line = "GET /" + String(repeating: "a", count: 65 - 14) + " HTTP/1.1"
        let error = parseError(line + "\r\nHost: h\r\n\r\n", limits: Self.small)
        #expect(error == .requestLineTooLong)
        #expect(error?.status == 414)
    }

    @Test func endlessRequestLineIs414BeforeItsEnd() {
        #expect(parseError("GET /" + String(repeating: "a", count: 200), limits: Self.small) == .requestLineTooLong)
    }

    @Test func headerBytesOverTheLimitAre431() {
        let field = "X: " + String(repeating: "v", count: 130) + "\r\n"
        let error = parseError("GET / HTTP/1.1\r\nHost: h\r\n" + field + "\r\n", limits: Self.small)
        #expect(error == .headersTooLarge)
        #expect(error?.status == 431)
        // Also before the end of the line arrives.
        #expect(parseError("GET / HTTP/1.1\r\nX: " + String(repeating: "v", count: 200), limits: Self.small) == .headersTooLarge)
    }

    @Test func headerBytesAtTheLimitPass() {
        // 128 bytes of field lines: "Host: h\r\n" (9) + "X: " + 114 + "\r\n" (119).
        let text = "GET / HTTP/1.1\r\nHost: h\r\nX: " + String(repeating: "v", count: 114) + "\r\n\r\n"
        #expect(parse(text, limits: Self.small).count == 1)
        let over = "GET / HTTP/1.1\r\nHost: h\r\nX: " + String(repeating: "v", count: 115) + "\r\n\r\n"
        #expect(parseError(over, limits: Self.small) == .headersTooLarge)
    }

    @Test func headerCountOverTheLimitIs431() {
        let four = "GET / HTTP/1.1\r\nHost: h\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n"
        #expect(parse(four, limits: Self.small).count == 1)
        let five = "GET / HTTP/1.1\r\nHost: h\r\nA: 1\r\nB: 2\r\nC: 3\r\nD: 4\r\n\r\n"
        let error = parseError(five, limits: Self.small)
        #expect(error == .tooManyHeaders)
        #expect(error?.status == 431)
    }

    @Test func contentLengthOverTheLimitIs413BeforeTheBody() {
        #expect(parse("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 16\r\n\r\n0123456789abcdef", limits: Self.small)
            .first?.body == "0123456789abcdef")
        let error = parseError("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 17\r\n\r\n", limits: Self.small)
        #expect(error == .bodyTooLarge)
        #expect(error?.status == 413)
    }

    @Test func hugeContentLengthIs413NotAnOverflow() {
        #expect(parseError("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 99999999999999999999999999\r\n\r\n")
            == .bodyTooLarge)
    }

    @Test func chunkedTotalOverTheLimitIs413() {
        let ok = "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n8\r\n01234567\r\n8\r\n01234567\r\n0\r\n\r\n"
        #expect(parse(ok, limits: Self.small).first?.body == "0123456701234567")
        let over = "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n8\r\n01234567\r\n9\r\n"
        let error = parseError(over, limits: Self.small)
        #expect(error == .bodyTooLarge)
        #expect(error?.status == 413)
    }

    @Test func trailersCountAgainstTheHeaderLimits() {
        let head = "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n"
        #expect(parseError(head + "A: 1\r\nB: 2\r\nC: 3\r\nD: 4\r\nE: 5\r\n\r\n", limits: Self.small) == .tooManyHeaders)
        #expect(parseError(head + "A: " + String(repeating: "x", count: 200) + "\r\n\r\n", limits: Self.small)
            == .headersTooLarge)
    }

    @Test func overlongChunkSizeLineIsRefused() {
        let text = "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n1;" + String(repeating: "e", count: 5000)
        #expect(parseError(text) == .invalidChunkSize)
    }
}
