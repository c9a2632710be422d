import Testing
@testable import HearthHTTP

@Suite("HTTPRequestParser: requests")
struct HTTPRequestParserTests {
    @Test func simpleGet() {
        let events = parse("GET /users/a.json?print=pretty HTTP/1.1\r\nHost: example.com\r\nAccept: */*\r\n\r\n")
        #expect(events == [.request(
            method: "GET", target: "/users/a.json?print=pretty", path: "/users/a.json", query: "print=pretty", minor: 1,
            headers: ["Host: example.com", "Accept: */*"], body: "", keepAlive: true)])
    }

    @Test func headerValuesAreTrimmedAndDuplicatesKept() {
        let events = parse("GET / HTTP/1.1\r\nHost: a\r\nX-A:  one \t\r\nx-a:two\r\nX-Empty:\r\n\r\n")
        guard case .request(_, _, _, _, _, let headers, _, _)? = events.first else {
            Issue.record("no request: \(events)")
            return
        }
        #expect(headers == ["Host: a", "X-A: one", "x-a: two", "X-Empty: "])
    }

    @Test func headersLookUpCaseInsensitively() {
        var parser = HTTPRequestParser()
        parser.feed(Array("GET / HTTP/1.1\r\nHost: a\r\nX-Token: 1\r\nx-token: 2\r\n\r\n".utf8))
        guard case .request(let request, _)? = parser.next() else {
            Issue.record("no request")
            return
        }
        #expect(request.headers["X-TOKEN"] == "1")
        #expect(request.headers.values("x-Token") == ["1", "2"])
    }

    @Test func splitAtEveryByteBoundaryGivesTheSameResult() {
        let text = "POST /a?b=c HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello"
            + "PUT /c HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3;x=y\r\nabc\r\n2\r\nde\r\n0\r\nT: v\r\n\r\n"
            + "GET /d HTTP/1.0\r\n\r\n"
        let bytes = Array(text.utf8)
        let whole = parse([bytes])
        #expect(whole.count == 3)
        for split in 0...bytes.count {
            let events = parse([Array(bytes[..<split]), Array(bytes[split...])])
            #expect(events == whole, "split at \(split)")
        }
        let oneByteAtATime = parse(bytes.map { [$0] })
        #expect(oneByteAtATime == whole)
    }

    @Test func pipelinedRequestsInOneBuffer() {
        let events = parse("GET /1 HTTP/1.1\r\nHost: h\r\n\r\nPOST /2 HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabc"
                           + "GET /3 HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n")
        #expect(events.count == 3)
        #expect(events.map(\.keepAlive) == [true, true, false])
        #expect(events[1].body == "abc")
        guard case .request(_, let target, _, _, _, _, _, _) = events[2] else { return }
        #expect(target == "/3")
    }

    @Test func contentLengthBody() {
        let events = parse("PUT /x HTTP/1.1\r\nHost: h\r\nContent-Length: 11\r\n\r\nhello world")
        #expect(events.first?.body == "hello world")
    }

    @Test func contentLengthBodyArrivingLater() {
        var parser = HTTPRequestParser()
        parser.feed(Array("PUT /x HTTP/1.1\r\nHost: h\r\nContent-Length: 4\r\n\r\nab".utf8))
        #expect(parser.next() == nil)
        #expect(parser.phase == .body)
        parser.feed(Array("cd".utf8))
        let event = parser.next().map(Parsed.init)
        #expect(event?.body == "abcd")
        #expect(parser.phase == .betweenRequests)
    }

    @Test func identicalRepeatedContentLengthsAreAccepted() {
        #expect(parse("PUT / HTTP/1.1\r\nHost: h\r\nContent-Length: 2, 2\r\nContent-Length: 2\r\n\r\nab").first?.body == "ab")
    }

    @Test func chunkedBodyWithExtensionsAndTrailers() {
        let events = parse("POST /c HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
                           + "5;name=value;flag\r\nhello\r\n1 ; ext\r\n \r\nA\r\n0123456789\r\n0;last\r\nX-Trailer: t\r\nY: y\r\n\r\n"
                           + "GET /next HTTP/1.1\r\nHost: h\r\n\r\n")
        #expect(events.count == 2)
        #expect(events.first?.body == "hello 0123456789")
    }

    @Test func chunkedCodingNameIsCaseInsensitive() {
        #expect(parse("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: Chunked\r\n\r\n1\r\na\r\n0\r\n\r\n").first?.body == "a")
    }

    @Test func expectContinueIsReportedBeforeTheBody() {
        var parser = HTTPRequestParser()
        parser.feed(Array("POST /u HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n".utf8))
        #expect(parser.next().map(Parsed.init) == .continueExpected)
        #expect(parser.next() == nil)
        parser.feed(Array("abc".utf8))
        #expect(parser.next().map(Parsed.init)?.body == "abc")
    }

    @Test func expectContinueIsNotReportedWhenTheBodyAlreadyArrived() {
        let events = parse("POST /u HTTP/1.1\r\nHost: h\r\nExpect: 100-Continue\r\nContent-Length: 3\r\n\r\nabc")
        #expect(events.count == 1)
        #expect(events.first?.body == "abc")
    }

    @Test func expectContinueWithoutBodyIsNotReported() {
        #expect(parse("GET / HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\n\r\n").count == 1)
    }

    @Test func expectContinueOverTheBodyLimitIsRefusedWithout100() {
        var limits = HTTPLimits()
        limits.maxBodyBytes = 10
        let events = parse("POST / HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 11\r\n\r\n", limits: limits)
        #expect(events == [.error(.bodyTooLarge)])
    }

    @Test func unknownExpectationIs417() {
        let error = parseError("POST / HTTP/1.1\r\nHost: h\r\nExpect: teapot\r\nContent-Length: 1\r\n\r\na")
        #expect(error == .unsupportedExpectation)
        #expect(error?.status == 417)
    }

    @Test(arguments: [
        ("GET / HTTP/1.1\r\nHost: h\r\n\r\n", true),
        ("GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n", false),
        ("GET / HTTP/1.1\r\nHost: h\r\nConnection: Upgrade, CLOSE\r\n\r\n", false),
        ("GET / HTTP/1.0\r\n\r\n", false),
        ("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", true),
        ("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", true),
        ("GET / HTTP/1.0\r\nConnection: keep-alive, close\r\n\r\n", false),
    ])
    func keepAliveRules(request: String, keepAlive: Bool) {
        #expect(parse(request).first?.keepAlive == keepAlive)
    }

    @Test func http10NeedsNoHost() {
        guard case .request(_, _, _, _, let minor, _, _, _)? = parse("GET / HTTP/1.0\r\n\r\n").first else {
            Issue.record("no request")
            return
        }
        #expect(minor == 0)
    }

    @Test func higherMinorVersionIsServedAsHTTP11() {
        guard case .request(_, _, _, _, let minor, _, _, _)? = parse("GET / HTTP/1.7\r\nHost: h\r\n\r\n").first else {
            Issue.record("no request")
            return
        }
        #expect(minor == 1)
    }

    @Test func leadingEmptyLinesAreIgnored() {
        #expect(parse("\r\n\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n").count == 1)
    }

    @Test func commonAndUnusualMethodsAndTargets() {
        let events = parse("OPTIONS * HTTP/1.1\r\nHost: h\r\n\r\nPROPFIND /d HTTP/1.1\r\nHost: h\r\n\r\n"
                           + "GET http://h/x?y HTTP/1.1\r\nHost: h\r\n\r\n")
        #expect(events.count == 3)
        guard case .request(let m, let t, _, _, _, _, _, _) = events[1],
              case .request(_, _, let p, let q, _, _, _, _) = events[2] else { return }
        #expect(m == "PROPFIND")
        #expect(t == "/d")
        #expect(p == "http://h/x")
        #expect(q == "y")
    }

    @Test func phasesFollowTheMessage() {
        var parser = HTTPRequestParser()
        #expect(parser.phase == .betweenRequests)
        parser.feed(Array("GET / HT".utf8))
        _ = parser.next()
        #expect(parser.phase == .head)
        parser.feed(Array("TP/1.1\r\nHost: h\r\n\r\n".utf8))
        #expect(parser.next() != nil)
        #expect(parser.phase == .betweenRequests)
        parser.feed(Array("BAD\0 / HTTP/1.1\r\nHost: h\r\n\r\n".utf8))
        #expect(parser.next().map(Parsed.init) == .error(.invalidMethod))
        #expect(parser.phase == .failed)
        parser.feed(Array("GET / HTTP/1.1\r\nHost: h\r\n\r\n".utf8))
        #expect(parser.next() == nil)
    }
}
