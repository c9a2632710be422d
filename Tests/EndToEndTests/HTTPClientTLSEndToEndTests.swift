import Foundation
import HearthHTTPClient
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// HearthHTTPClient's https (trigger deliveries, JWKS fetches) against a real TLS server,
/// `openssl s_server -www`, with a certificate for `localhost` made here. In this target
/// because it runs child processes (`Spawn`).
@Suite struct HTTPClientTLSEndToEndTests {
    /// https against `openssl s_server -www` with a certificate for `localhost` made here:
    /// trusted through `caFile`, refused without it (the system's authorities do not know it).
    @Test func httpsVerifiesTheCertificateAndTheName() throws {
        let directory = TemporaryDirectory()
        try Self.makeLocalhostCertificate(in: directory.path)
        let port = try freeLoopbackPort()
        let server = try Self.startQuietly(Self.openssl, ["s_server", "-accept", "127.0.0.1:\(port)", "-cert", directory.path + "/cert.pem",
                                                         "-key", directory.path + "/key.pem", "-www", "-quiet"])
        defer {
            server.signal(SIGKILL)
            server.waitUntilExit()
        }
        let url = try HTTPURL("https://localhost:\(port)/")
        let trusting = HTTPClient(timeoutSeconds: 10, caFile: directory.path + "/cert.pem")
        let answer = try Self.onceListening { try trusting.send(HTTPClientRequest(url: url)) }
        #expect(answer.status == 200 && String(decoding: answer.body, as: UTF8.self).contains("<HTML>"))
        let untrusted = Result { try HTTPClient(timeoutSeconds: 10).send(HTTPClientRequest(url: url)) }
        #expect(Self.tlsFailure(untrusted)?.contains("not trusted") == true, "\(untrusted)")
        // The name is checked too: 127.0.0.1 is not in the certificate.
        #expect(throws: HTTPClientError.self) {
            try trusting.send(HTTPClientRequest(url: try HTTPURL("https://127.0.0.1:\(port)/")))
        }
    }

    static let openssl = "/usr/bin/openssl"

    /// A self-signed certificate for `localhost`, valid a day: `cert.pem` and `key.pem` in
    /// `directory`.
    static func makeLocalhostCertificate(in directory: String) throws {
        let made = try Spawn.run(openssl, ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost",
                                           "-days", "1", "-keyout", directory + "/key.pem", "-out", directory + "/cert.pem"], input: nil)
        try #require(made.status == 0)
    }

    /// `executable` with `arguments`, started with its output thrown away.
    static func startQuietly(_ executable: String, _ arguments: [String]) throws -> ChildProcess {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try process.run()
        return process
    }

    /// `body`'s answer, retried while the connection is refused (60 s safety net): a
    /// server that is starting.
    static func onceListening(_ body: () throws -> HTTPClientResponse) throws -> HTTPClientResponse {
        let deadline = ContinuousClock.now + .seconds(60)
        while true {
            let result = Result(catching: body)
            if case .failure(let error as HTTPClientError) = result, error.isRefused, ContinuousClock.now < deadline {
                Thread.sleep(forTimeInterval: 0.02)
                continue
            }
            return try result.get()
        }
    }

    static func tlsFailure(_ result: Result<HTTPClientResponse, any Error>) -> String? {
        guard case .failure(let error as HTTPClientError) = result, case .connection(.tls(let why)) = error else { return nil }
        return why
    }
}
