import HearthHTTP
import HearthSystem
@testable import HearthServer
import Testing

/// Which requests may carry the emulator's credentials (`LocalOnlyCredentials`,
/// `LoopbackOrigin`), decided from literals: the origin parsed (scheme, host, port), never
/// matched by text prefix; every forwarding header refuses.
@Suite struct EmulatorOriginTests {
    @Test(arguments: ["http://localhost", "http://localhost:3000", "https://localhost:443", "HTTP://LocalHost:5173",
                      "http://127.0.0.1", "http://127.0.0.1:9000", "https://127.0.0.1:1", "http://[::1]", "http://[::1]:8080",
                      "https://[::1]:65535", "http://127.0.0.2"])
    func loopbackOrigins(origin: String) {
        #expect(LoopbackOrigin.isLoopback(origin: origin))
    }

    @Test(arguments: ["https://evil.example", "http://localhost.evil.example", "http://127.0.0.1.nip.io", "http://127.0.0.1.nip.io:80",
                      "http://localhost@evil.example", "http://evil.example@localhost", "http://localhost:3000/", "http://localhost:",
                      "http://localhost:65536", "http://localhost:123456", "http://localhost:-1", "http://localhost:80x", "null",
                      "file://", "ws://localhost", "localhost", "http://[::1", "http://[::2]", "http://::1", "http://0177.0.0.1", "http://2130706433",
                      "http://localhost.", "", "http://", "chrome-extension://localhost"])
    func otherOrigins(origin: String) {
        #expect(!LoopbackOrigin.isLoopback(origin: origin))
    }

    /// Hosts and socket peers judged whole (`LoopbackHost`): the emulator mode's listening
    /// host (`--host`) and the peers of requests that may carry its credentials.
    @Test func loopbackHostsAndPeers() {
        for loopback in ["127.0.0.1", "127.1.2.3", "::1", "[::1]", "0:0:0:0:0:0:0:1", "localhost", "LOCALHOST", "::ffff:127.0.0.1", "[::FFFF:127.0.0.9]"] {
            #expect(HearthService.isLoopback(loopback), "\(loopback)")
        }
        for other in ["127.0.0.1.nip.io", "127.evil.example", "localhost.evil.example", "0.0.0.0", "::", "10.0.0.1", "::ffff:10.0.0.1",
                      "0177.0.0.1", "2130706433", "127.0.0", "127.0.0.256", "[::1", "", "::ffff:", "evil@127.0.0.1"] {
            #expect(!HearthService.isLoopback(other), "\(other)")
        }
    }

    @Test func referersAreWholeURLs() {
        #expect(LoopbackOrigin.isLoopback(referer: "http://localhost:5173/index.html?x=1"))
        #expect(LoopbackOrigin.isLoopback(referer: "http://127.0.0.1/"))
        #expect(LoopbackOrigin.isLoopback(referer: "https://[::1]:8443/app#top"))
        #expect(LoopbackOrigin.isLoopback(referer: "http://localhost"))
        #expect(!LoopbackOrigin.isLoopback(referer: "https://evil.example/http://localhost/"))
        #expect(!LoopbackOrigin.isLoopback(referer: "http://localhost.evil.example/"))
        #expect(!LoopbackOrigin.isLoopback(referer: "http://127.0.0.1.nip.io/page"))
        #expect(!LoopbackOrigin.isLoopback(referer: "http://localhost@evil.example/"))
        #expect(!LoopbackOrigin.isLoopback(referer: "about:blank"))
    }

    static func request(_ headers: [(String, String)] = [], path: String = "/x.json", peer: String = "127.0.0.1") -> HTTPRequest {
        var request = HTTPRequest(method: "GET", target: path, remoteAddress: peer)
        request.peerAddress = peer
        for (name, value) in headers { request.headers.add(name, value) }
        return request
    }

    @Test func straightFromThisMachine() {
        #expect(LocalOnlyCredentials.refusal(Self.request()) == nil)
        #expect(LocalOnlyCredentials.refusal(Self.request(peer: "::1")) == nil)
        #expect(LocalOnlyCredentials.refusal(Self.request([("Origin", "http://localhost:3000")])) == nil)
        #expect(LocalOnlyCredentials.refusal(Self.request(peer: "192.0.2.4")) == .remotePeer)
    }

    @Test(arguments: LocalOnlyCredentials.forwardingHeaders)
    func everyForwardingHeaderRefuses(header: String) {
        #expect(LocalOnlyCredentials.refusal(Self.request([(header, "203.0.113.9")])) == .forwarded(header))
        // Spelled in any case.
        #expect(LocalOnlyCredentials.refusal(Self.request([(header.lowercased(), "203.0.113.9")])) == .forwarded(header))
    }

    @Test func theNamedForwardingHeadersAreAllThere() {
        let expected: Set = ["Forwarded", "X-Forwarded-For", "X-Real-IP", "Via", "CF-Connecting-IP", "True-Client-IP", "X-Client-IP",
                             "X-Original-Forwarded-For", "X-Forwarded-Host", "Fastly-Client-IP", "X-Cluster-Client-IP"]
        #expect(expected.isSubset(of: Set(LocalOnlyCredentials.forwardingHeaders)))
    }

    @Test func aPageOfAnotherOriginIsRefused() {
        #expect(LocalOnlyCredentials.refusal(Self.request([("Origin", "https://evil.example")])) == .foreignOrigin)
        #expect(LocalOnlyCredentials.refusal(Self.request([("Origin", "null")])) == .foreignOrigin)
        // REST is judged by Origin only: a Referer alone does not refuse (a browser sends
        // Origin on every cross-origin request that could carry the token in a header).
        #expect(LocalOnlyCredentials.refusal(Self.request([("Referer", "https://evil.example/")])) == nil)
    }

    @Test func aLongPollNeedsALoopbackReferer() {
        let start = "/.lp?start=t&ser=1&cb=7&v=5"
        #expect(LocalOnlyCredentials.refusal(Self.request([("Referer", "http://localhost:5173/")], path: start)) == nil)
        #expect(LocalOnlyCredentials.refusal(Self.request([("Referer", "https://evil.example/")], path: start)) == .foreignReferer)
        #expect(LocalOnlyCredentials.refusal(Self.request(path: start)) == .foreignReferer)
        #expect(LocalOnlyCredentials.refusal(Self.request([("Referer", "http://localhost/"), ("Origin", "https://evil.example")], path: start))
                == .foreignOrigin)
    }

    @Test func preflightsGrantAuthorizationOnlyToLoopbackPagesInEmulatorMode() {
        func allowed(_ origin: String?, emulator: Bool) -> String? {
            var request = Self.request(origin.map { [("Origin", $0), ("Access-Control-Request-Headers", "authorization, content-type")] } ?? [])
            request.method = "OPTIONS"
            return Router.preflight(request, emulatorMode: emulator).headers["Access-Control-Allow-Headers"]
        }
        #expect(allowed("https://evil.example", emulator: true) == "content-type")
        #expect(allowed("http://localhost:3000", emulator: true) == "authorization, content-type")
        #expect(allowed("https://evil.example", emulator: false) == "authorization, content-type")
        #expect(allowed(nil, emulator: true) == "Authorization, Content-Type")
    }
}
