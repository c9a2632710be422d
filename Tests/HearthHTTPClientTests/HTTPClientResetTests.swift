#if canImport(Glibc)
import Glibc
#endif
import HearthSystem
import HearthTesting
import Testing
@testable import HearthHTTPClient

/// A connection reset by the server before any byte of an answer is a connection failure
/// (what the triggers' retry policy treats as "nothing ran"), typed with its errno.
@Suite struct HTTPClientResetTests {
    /// Reads the request, then closes with SO_LINGER 0: the kernel sends a reset.
    @Test func aResetBeforeAnyAnswerIsAConnectionFailure() throws {
        let listener = try LoopbackListener { socket in
            guard socket.readRequest() != nil else { return }
            var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
            _ = setsockopt(socket.fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        }
        defer { listener.stop() }
        do {
            _ = try HTTPClient(timeoutSeconds: 5).send(HTTPClientRequest(method: "POST", url: try HTTPURL("http://127.0.0.1:\(listener.port)/"), body: [1]))
            Issue.record("an answer from a reset connection")
        } catch {
            guard case .connection(.system(let system)) = error else { Issue.record("\(error)"); return }
            #expect(system.errno == ECONNRESET)
        }
    }
}
