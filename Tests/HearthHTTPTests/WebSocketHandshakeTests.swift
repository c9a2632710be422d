import Testing
@testable import HearthHTTP

@Suite("WebSocket: opening handshake")
struct WebSocketHandshakeTests {
    static func request(
        method: String = "GET", minorVersion: Int = 1, upgrade: String? = "websocket", connection: String? = "Upgrade",
        version: String? = "13", key: String? = "dGhlIHNhbXBsZSBub25jZQ==", extra: [(String, String)] = []
    ) -> HTTPRequest {
        var headers = HTTPHeaders([("Host", "127.0.0.1:9000")])
        if let upgrade { headers.add("Upgrade", upgrade) }
        if let connection { headers.add("Connection", connection) }
        if let version { headers.add("Sec-WebSocket-Version", version) }
        if let key { headers.add("Sec-WebSocket-Key", key) }
        for (name, value) in extra { headers.add(name, value) }
        return HTTPRequest(method: method, target: "/.ws?v=5&ns=demo", minorVersion: minorVersion, headers: headers)
    }

    @Test func theRFCsSampleKeyGivesTheRFCsAcceptValue() throws {
        // RFC 6455 §1.3.
        #expect(WebSocketHandshake.acceptValue(forKey: "dGhlIHNhbXBsZSBub25jZQ==") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
        let response = try WebSocketHandshake.accept(Self.request()).get()
        #expect(response.status == 101)
        #expect(response.headers["Upgrade"] == "websocket")
        #expect(response.headers["Connection"] == "Upgrade")
        #expect(response.headers["Sec-WebSocket-Accept"] == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
    }

    @Test func tokensAreMatchedCaseInsensitivelyInLists() {
        let request = Self.request(upgrade: "WebSocket", connection: "keep-alive, UPGRADE")
        #expect((try? WebSocketHandshake.accept(request).get())?.status == 101)
    }

    @Test(arguments: [
        (request(method: "POST"), WebSocketHandshake.Refusal.notAnUpgrade),
        (request(minorVersion: 0), .notAnUpgrade),
        (request(upgrade: nil), .notAnUpgrade),
        (request(upgrade: "h2c"), .notAnUpgrade),
        (request(connection: nil), .notAnUpgrade),
        (request(connection: "keep-alive"), .notAnUpgrade),
        (request(version: nil), .unsupportedVersion),
        (request(version: "8"), .unsupportedVersion),
        (request(extra: [("Sec-WebSocket-Version", "13")]), .unsupportedVersion),
        (request(key: nil), .invalidKey),
        (request(key: "short=="), .invalidKey),
        (request(key: "dGhlIHNhbXBsZSBub25jZQ"), .invalidKey),
        (request(key: "dGhlIHNhbXBsZSBub25jZ!=="), .invalidKey),
        (request(extra: [("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")]), .invalidKey),
    ] as [(HTTPRequest, WebSocketHandshake.Refusal)])
    func refusals(request: HTTPRequest, expected: WebSocketHandshake.Refusal) {
        guard case .failure(let refusal) = WebSocketHandshake.accept(request) else {
            Issue.record("accepted")
            return
        }
        #expect(refusal == expected)
    }

    @Test func refusalsAnswerWithClearErrors() {
        let version = WebSocketHandshake.Refusal.unsupportedVersion.response
        #expect(version.status == 426)
        #expect(version.headers["Sec-WebSocket-Version"] == "13")
        #expect(version.headers["Upgrade"] == "websocket")
        #expect(String(decoding: version.body, as: UTF8.self) == #"{"error":"WebSocket version 13 is required"}"#)
        #expect(WebSocketHandshake.Refusal.invalidKey.response.status == 400)
        let plain = WebSocketHandshake.Refusal.notAnUpgrade.response
        #expect(plain.status == 400)
        #expect(String(decoding: plain.body, as: UTF8.self) == #"{"error":"Expected a WebSocket upgrade request"}"#)
    }

    @Test func onlyUpgradeWebsocketMarksAnUpgradeRequest() {
        #expect(WebSocketHandshake.isUpgradeRequest(Self.request()))
        #expect(!WebSocketHandshake.isUpgradeRequest(Self.request(upgrade: nil)))
        #expect(!WebSocketHandshake.isUpgradeRequest(Self.request(upgrade: "h2c")))
    }
}
