#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import HearthTesting
import Synchronization
import Testing
@testable import HearthHTTPClient

/// The client against a real listener on 127.0.0.1 port 0, and its response reader from literals.
@Suite struct HTTPClientTests {
    /// A listener answering every connection with `reply(request)` as raw bytes.
    static func serving(_ reply: @escaping @Sendable (ReceivedRequest) -> [UInt8]) throws -> LoopbackListener {
        try LoopbackListener { socket in
            guard let request = socket.readRequest() else { return }
            try? socket.send(bytes: reply(request))
        }
    }

    @Test func postsHeadersAndBodyAndReadsAContentLengthAnswer() throws {
        let seen = Mutex<ReceivedRequest?>(nil)
        let listener = try Self.serving { request in
            seen.withLock { $0 = request }
            return Array("HTTP/1.1 201 Created\r\nContent-Length: 5\r\nX-Answer: yes\r\n\r\nhello".utf8)
        }
        defer { listener.stop() }
        let url = try HTTPURL("http://127.0.0.1:\(listener.port)/hook/a?x=1")
        let response = try HTTPClient(timeoutSeconds: 10).send(
            HTTPClientRequest(method: "POST", url: url, headers: [("ce-id", "42"), ("Content-Type", "application/json")], body: Array("{\"a\":1}".utf8)))
        #expect(response.status == 201 && response.isSuccess)
        #expect(response.header("x-answer") == "yes")
        #expect(String(decoding: response.body, as: UTF8.self) == "hello")
        let request = try #require(seen.withLock { $0 })
        #expect(request.method == "POST" && request.target == "/hook/a?x=1")
        #expect(request.header("Host") == "127.0.0.1:\(listener.port)")
        #expect(request.header("ce-id") == "42" && request.header("content-length") == "7")
        #expect(request.text == "{\"a\":1}")
    }

    @Test func readsChunkedAndCloseDelimitedBodiesAndSkipsInterimAnswers() throws {
        let chunked = try Self.serving { _ in
            Array("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4;ext=1\r\nWiki\r\n5\r\npedia\r\n0\r\nTrailer: x\r\n\r\n".utf8)
        }
        defer { chunked.stop() }
        let client = HTTPClient(timeoutSeconds: 10)
        let first = try client.send(HTTPClientRequest(url: try HTTPURL("http://127.0.0.1:\(chunked.port)/")))
        #expect(first.status == 200 && String(decoding: first.body, as: UTF8.self) == "Wikipedia")
        let untilClose = try Self.serving { _ in Array("HTTP/1.0 500 Oops\r\n\r\nall of it".utf8) }
        defer { untilClose.stop() }
        let second = try client.send(HTTPClientRequest(url: try HTTPURL("http://127.0.0.1:\(untilClose.port)")))
        #expect(second.status == 500 && !second.isSuccess && String(decoding: second.body, as: UTF8.self) == "all of it")
    }

    /// A held `RefusingPort` (bound, not listening): the connection is refused, and while
    /// it is held nobody else can bind the port (a test running beside could otherwise be
    /// given it and answer); once released, a listener can.
    @Test func aRefusedConnectionIsTyped() throws {
        let refusing = try RefusingPort()
        #expect(throws: HTTPClientError.connection(.refused)) {
            try HTTPClient(timeoutSeconds: 5).send(HTTPClientRequest(url: try HTTPURL("http://127.0.0.1:\(refusing.port)/")))
        }
        #expect(throws: LiveClientError.self) { try bindLoopback(listen: true, port: refusing.port) }
        refusing.release()
        let (fd, port) = try bindLoopback(listen: true, port: refusing.port)
        close(fd)
        #expect(port == refusing.port)
    }

    @Test func aSilentServerTimesOut() throws {
        let release = DispatchSemaphore(value: 0)
        let listener = try LoopbackListener { socket in
            _ = socket.readRequest()
            release.wait()  // answers nothing until the client gave up
        }
        defer { release.signal(); listener.stop() }
        do {
            _ = try HTTPClient(timeoutSeconds: 1).send(HTTPClientRequest(url: try HTTPURL("http://127.0.0.1:\(listener.port)/")))
            Issue.record("expected a timeout")
        } catch {
            #expect(error.isTimeout, "\(error)")
        }
    }

    @Test func anAnswerPastTheLimitIsRefused() throws {
        let limit = 4096
        let big = try Self.serving { _ in Array("HTTP/1.1 200 OK\r\nContent-Length: \(limit + 1)\r\n\r\n".utf8) + [UInt8](repeating: 65, count: limit + 1) }
        defer { big.stop() }
        let client = HTTPClient(timeoutSeconds: 10, maxResponseBytes: limit)
        #expect(throws: HTTPClientError.responseTooLarge(limit: limit)) {
            try client.send(HTTPClientRequest(url: try HTTPURL("http://127.0.0.1:\(big.port)/")))
        }
        let streamed = try Self.serving { _ in Array("HTTP/1.1 200 OK\r\n\r\n".utf8) + [UInt8](repeating: 65, count: limit * 2) }
        defer { streamed.stop() }
        #expect(throws: HTTPClientError.responseTooLarge(limit: limit)) {
            try client.send(HTTPClientRequest(url: try HTTPURL("http://127.0.0.1:\(streamed.port)/")))
        }
        // Just under the limit (head included) passes.
        let head = Array("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n".utf8)
        let fits = try Self.serving { _ in head + [UInt8](repeating: 66, count: 100) }
        defer { fits.stop() }
        let response = try HTTPClient(timeoutSeconds: 10, maxResponseBytes: head.count + 100)
            .send(HTTPClientRequest(url: try HTTPURL("http://127.0.0.1:\(fits.port)/")))
        #expect(response.body.count == 100)
    }

    @Test(arguments: [
        "HTTP/1.1 20 OK\r\n\r\n", "SMTP 220 hi\r\n\r\n", "HTTP/1.1 200 OK\r\nno colon here\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", "HTTP/1.1 200 OK\r\nContent-Length: 1, 2\r\n\r\nab",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n0\r\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", "HTTP/1.1 200 OK\r\nX: y",
    ])
    func malformedAnswersAreBadResponses(_ raw: String) throws {
        var input = Array(raw.utf8)
        var reader = ResponseReader(limit: 1 << 20, deadline: nil) { chunk throws(HTTPClientError) in
            let count = min(chunk.count, input.count, 3)  // three bytes at a time: every boundary
            chunk.replaceSubrange(0..<count, with: input[0..<count])
            input.removeFirst(count)
            return count
        }
        do {
            let response = try reader.response(forHEAD: false)
            Issue.record("accepted \(raw.debugDescription) as \(response.status)")
        } catch {
            guard case .badResponse = error else { Issue.record("\(error)"); return }
        }
    }

    @Test func aHeadLongerThanTheLimitIsRefused() throws {
        var input = Array(("HTTP/1.1 200 OK\r\n" + String(repeating: "X-Filler: 0123456789\r\n", count: HTTPClient.maxHeadBytes / 20) + "\r\n").utf8)
        var reader = ResponseReader(limit: 1 << 24, deadline: nil) { chunk throws(HTTPClientError) in
            let count = min(chunk.count, input.count)
            chunk.replaceSubrange(0..<count, with: input[0..<count])
            input.removeFirst(count)
            return count
        }
        #expect(throws: HTTPClientError.badResponse("a response head longer than \(HTTPClient.maxHeadBytes) bytes")) {
            try reader.response(forHEAD: false)
        }
    }

    @Test func urlsAndHeadersAreChecked() throws {
        let url = try HTTPURL("https://[::1]:8443/a?k=secret#frag")
        #expect(url.isTLS && url.host == "::1" && url.port == 8443 && url.target == "/a?k=secret")
        #expect(url.redacted == "https://[::1]:8443/a")
        #expect(try HTTPURL("http://example.com").port == 80)
        #expect(try HTTPURL("http://example.com?q").target == "/?q")
        for bad in ["ftp://x/", "http://", "http://h:0/", "http://h:99999/", "http://u:p@h/", "http://h/a b", "http://[::1/"] {
            #expect(throws: HTTPClientError.self, "\(bad)") { try HTTPURL(bad) }
        }
        #expect(throws: HTTPClientError.self) { try HTTPURL("http://h/" + String(repeating: "a", count: HTTPURL.maxLength)) }
        let target = try HTTPURL("http://127.0.0.1:1/")
        for headers in [[("Bad Name", "v")], [("X", "line\r\nInjected: 1")], [("Host", "evil")], [("", "v")]] {
            #expect(throws: HTTPClientError.self) { try HTTPClient.head(of: HTTPClientRequest(url: target, headers: headers)) }
        }
        // The error never repeats a header's value (it may be a secret).
        do {
            _ = try HTTPClient.head(of: HTTPClientRequest(url: target, headers: [("X-Secret", "s3cret\n")]))
        } catch {
            #expect(!error.description.contains("s3cret"))
        }
    }
}
