import Glibc
import HearthServer
import HearthTesting
import Logging
import Testing

/// The server warns at start when the open-file limit is below the connection cap.
@Suite struct OpenFileLimitLiveTests {
    /// The hard limit on open files, which is what the server can raise its own limit to.
    static var hardLimit: Int {
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        return Int(clamping: limit.rlim_max)
    }

    static func warnings(maxConnections: Int) async throws -> [String] {
        let logs = CapturedLogs()
        let server = try LiveServer(logger: Logger(label: "t", factory: logs.handler)) {
            $0.limits.maxConnections = maxConnections
        }
        await server.stop()
        return logs.lines.withLock { $0.map(\.message) }.filter { $0.contains("open-file limit") }
    }

    @Test(.enabled(if: hardLimit < 10_000_000, "the hard open-file limit is effectively unlimited here"))
    func aConnectionCapAboveTheOpenFileLimitIsWarnedAbout() async throws {
        let cap = Self.hardLimit + 1_000
        let warned = try await Self.warnings(maxConnections: cap)
        #expect(warned.count == 1)
        #expect(warned.first?.contains("below max connections \(cap)") == true)
        #expect(warned.first?.contains("ulimit -n") == true)
        #expect(try await Self.warnings(maxConnections: 100).isEmpty)
    }
}
