import Testing
@testable import HearthHTTP

@Suite("HTTPResponseSerializer")
struct HTTPResponseSerializerTests {
    func serialize(_ response: HTTPResponse, head: Bool = false, keepAlive: Bool = true, minor: Int = 1) -> String {
        var out: [UInt8] = []
        HTTPResponseSerializer.serialize(response, isHead: head, keepAlive: keepAlive, minorVersion: minor, into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    @Test func addsContentLength() {
        let text = serialize(HTTPResponse(status: 200, headers: HTTPHeaders([("Content-Type", "application/json")]),
                                          body: Array(#"{"status":"ok"}"#.utf8)))
        #expect(text == "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 15\r\n\r\n{\"status\":\"ok\"}")
    }

    @Test func closingAddsConnectionClose() {
        #expect(serialize(HTTPResponse(status: 404), keepAlive: false)
            == "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
    }

    @Test func http10KeepAliveIsAnnounced() {
        #expect(serialize(HTTPResponse(status: 200), minor: 0)
            == "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: keep-alive\r\n\r\n")
    }

    @Test func headHasTheLengthButNoBody() {
        #expect(serialize(.init(status: 200, body: Array("hello".utf8)), head: true)
            == "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n")
        #expect(serialize(.init(status: 200, headers: HTTPHeaders([("content-length", "42")])), head: true)
            == "HTTP/1.1 200 OK\r\nContent-Length: 42\r\n\r\n")
    }

    @Test func handlerFramingFieldsAreReplaced() {
        let response = HTTPResponse(
            status: 200, headers: HTTPHeaders([("Content-Length", "999"), ("Transfer-Encoding", "chunked"),
                                               ("Connection", "keep-alive")]), body: [65])
        #expect(serialize(response) == "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nA")
    }

    @Test func noContentHasNoLengthAndNoBody() {
        #expect(serialize(.init(status: 204, body: [1, 2])) == "HTTP/1.1 204 No Content\r\n\r\n")
    }

    @Test func headerInjectionIsNeutralised() {
        let response = HTTPResponse(status: 200, headers: HTTPHeaders([("X", "a\r\nSet-Cookie: evil")]))
        #expect(serialize(response) == "HTTP/1.1 200 OK\r\nX: a  Set-Cookie: evil\r\nContent-Length: 0\r\n\r\n")
    }

    @Test func errorBodiesAreGenericJSON() {
        let response = HTTPResponseSerializer.errorResponse(status: 400)
        #expect(String(decoding: response.body, as: UTF8.self) == #"{"error":"Bad request"}"#)
        #expect(response.headers["content-type"] == "application/json")
    }

    /// The HTTP layer's texts are sentences, as the REST layer's are ("Permission denied",
    /// "Service unavailable; …"): one casing style for every `{"error": …}`.
    @Test func errorTextsAreSentenceCase() {
        let texts = [400, 408, 413, 414, 417, 431, 501, 503, 505, 599].map { HTTPResponseSerializer.genericError($0).description }
        #expect(texts == ["Bad request", "Request timeout", "Payload too large", "Request target too long", "Expectation failed",
                          "Request header fields too large", "Not implemented", "Service unavailable", "HTTP version not supported", "Error"])
    }

    @Test func decimalWriting() {
        for value in [0, 7, 10, 99, 100, 12345, 16 * 1024 * 1024, Int.max] {
            var out: [UInt8] = []
            HTTPResponseSerializer.appendDecimal(value, to: &out)
            #expect(String(decoding: out, as: UTF8.self) == String(value))
        }
    }
}
