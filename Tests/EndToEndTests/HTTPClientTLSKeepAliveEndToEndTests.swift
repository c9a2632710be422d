import Foundation
import HearthHTTPClient
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A pooled `HTTPClient` over https, against Python's TLS server (libssl underneath, TLS
/// 1.3 with its session tickets after the handshake) keeping connections open: the
/// requests share one connection and one handshake. In this target because it runs a
/// child process.
@Suite struct HTTPClientTLSKeepAliveEndToEndTests {
    @Test func httpsRequestsShareOneConnectionThroughAPool() throws {
        let python = try pythonInterpreter()
        let directory = TemporaryDirectory()
        try HTTPClientTLSEndToEndTests.makeLocalhostCertificate(in: directory.path)
        let (cert, key) = (directory.path + "/cert.pem", directory.path + "/key.pem")
        let port = try freeLoopbackPort()
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Python/keepalive_tls_server.py").path
        let server = try HTTPClientTLSEndToEndTests.startQuietly(python, [script, String(port), cert, key])
        defer {
            server.signal(SIGKILL)
            server.waitUntilExit()
        }
        let url = try HTTPURL("https://localhost:\(port)/")
        func post(_ client: HTTPClient, _ text: String) throws -> String {
            String(decoding: try client.send(HTTPClientRequest(method: "POST", url: url, body: Array(text.utf8))).body, as: UTF8.self)
        }
        let pool = HTTPConnectionPool()
        let pooled = HTTPClient(timeoutSeconds: 10, caFile: cert, pool: pool)
        let first = try HTTPClientTLSEndToEndTests.onceListening {
            try pooled.send(HTTPClientRequest(method: "POST", url: url, body: Array("r0".utf8)))
        }
        #expect(String(decoding: first.body, as: UTF8.self) == "1 r0")
        for index in 1..<10 {
            #expect(try post(pooled, "r\(index)") == "1 r\(index)")
        }
        #expect(pool.counts.reused == 9 && pool.counts.discarded == 0)
        // Without a pool, a connection and a handshake each.
        let plain = HTTPClient(timeoutSeconds: 10, caFile: cert)
        #expect(try post(plain, "a") == "2 a")
        #expect(try post(plain, "b") == "3 b")
    }
}
