import Foundation
import HearthServer
import HearthTesting
import Testing

/// The long-poll transport (`/.lp`, docs/protocol/wire.md §8) against an in-process server,
/// driven by `EndToEndTests/Python/lp_client.py` (written from the JS SDK's
/// BrowserPollConnection): the session semantics of `/.ws` over polls, and each
/// `LongPollLimits` bound crossed.
@Suite struct LongPollLiveTests {
    static func run(_ mode: String, configure: @escaping (inout LongPollLimits) -> Void = { _ in }) async throws {
        try await run(mode, server: { configure(&$0.wire.longPoll) })
    }

    static func run(_ mode: String, rules: String = #"{"rules": {".read": true, ".write": true}}"#,
                    server configure: @escaping (inout HearthConfiguration) -> Void) async throws {
        let server = try LiveServer(rules: rules, configure: configure)
        let result = try WireLiveTests.client(mode, port: server.port, script: "lp_client.py")
        await server.stop()
        #expect(result.status == 0, "\(mode):\n\(result.output)")
        #expect(result.output.hasSuffix("done\n"), "\(mode):\n\(result.output)")
    }

    /// Handshake, requests, pushes (the listen's data before its ok, another client's
    /// write), a message of several segments, the disconnect frame, and onDisconnect when
    /// the client leaves.
    @Test func aSessionOverPolls() async throws {
        try await Self.run("session")
    }

    /// `ls=` on a new long-poll session ends the one it names first: its onDisconnect
    /// operations are committed before the new handshake, and its poll is closed.
    @Test func aReconnectEndsThePreviousSessionFirst() async throws {
        try await Self.run("reconnect")
    }

    /// `pollHoldSeconds`: a poll with nothing to take is answered empty once held that long.
    @Test func anIdlePollIsAnsweredEmptyAfterTheHoldTime() async throws {
        try await Self.run("hold") { $0.pollHoldSeconds = 0.5 }
    }

    /// `sessionIdleSeconds`: a client that stops polling loses its session; its
    /// onDisconnect operations run.
    @Test func aClientThatStopsPollingIsGoneAfterTheIdleTimeout() async throws {
        try await Self.run("idle") {
            $0.pollHoldSeconds = 0.5
            $0.sessionIdleSeconds = 1
        }
    }

    /// `maxSessions`: one more start is refused with 503 until a session ends.
    @Test func startsPastMaxSessionsAreRefused() async throws {
        try await Self.run("max_sessions") { $0.maxSessions = 2 }
    }

    /// `maxPendingBytes`, outbound: pushes piling up for a client that does not poll end
    /// its session.
    @Test func pushesPastMaxPendingBytesEndTheSession() async throws {
        try await Self.run("pending_out") { $0.maxPendingBytes = 4096 }
    }

    /// A stopping server answers a held poll with the close command at once (rather than
    /// holding its shutdown up for the poll's hold time), and ends the session.
    @Test func aStoppingServerClosesItsLongPolls() async throws {
        let server = try LiveServer()
        let driver = try InteractiveDriver(mode: "shutdown", port: server.port, script: "lp_client.py")
        let ready = driver.readLine()
        try #require(ready == "ready", "\(driver.output)")
        await server.stop()
        let (status, output) = driver.finish()
        #expect(status == 0, "\(output)")
        #expect(output.hasSuffix("done\n"), "\(output)")
    }

    /// `maxPendingBytes` holds for the first message waiting too: a read larger than it goes
    /// out on a poll held for it, but one with no poll to take it ends the session (its
    /// onDisconnect runs) rather than waiting whole for the idle timeout.
    @Test func aFirstMessagePastMaxPendingBytesWithNoPollEndsTheSession() async throws {
        try await Self.run("first_message") { $0.maxPendingBytes = 64 * 1024 }
    }

    /// `HTTPLimits.maxUnsentBytes`: messages waiting for a poll count in the server's unsent
    /// bytes (the `/metrics` gauge), the session that would pass them ends, and its bytes
    /// are released; its own `maxPendingBytes` (8 MiB) is far off.
    @Test func waitingMessagesCountAgainstTheServersUnsentBytes() async throws {
        try await Self.run("unsent", server: { $0.limits.maxUnsentBytes = 256 * 1024 })
    }

    /// `maxSessionsPerAddress`: one client address (forwarded by a trusted proxy) gets 429
    /// past it, while another address, and the proxy's own, still get sessions.
    @Test func sessionsPastMaxSessionsPerAddressAreRefusedForThatAddressOnly() async throws {
        try await Self.run("per_address", server: {
            $0.wire.longPoll.maxSessionsPerAddress = 2
            $0.trustedProxies = ["127.0.0.1"]
        })
    }

    /// Emulator mode: `owner` on a session started from another origin's page (its
    /// `Referer`), or with no `Referer`, is refused; from a loopback page it is an admin.
    @Test func emulatorOwnerOnALongPollNeedsALoopbackReferer() async throws {
        try await Self.run("emulator_referer", rules: #"{"rules": {".read": false, ".write": false}}"#,
                           server: { $0.auth.acceptEmulatorOwner = true })
    }

    /// `maxPendingBytes`, inbound, for whole requests: those waiting behind a running one
    /// are answered in order under the bound; past it the session ends (a long poll cannot
    /// stop reading as a WebSocket does) and its onDisconnect runs.
    @Test func requestsWaitingPastMaxPendingBytesEndTheSession() async throws {
        try await Self.run("waiting_bytes") { $0.maxPendingBytes = 2048 }
    }

    /// The wire's `maxPendingRequests` on a long poll: under it every request is answered;
    /// past it the session ends, where a WebSocket would stop reading.
    @Test func requestsWaitingPastMaxPendingRequestsEndTheSession() async throws {
        try await Self.run("waiting_count", server: { $0.wire.maxPendingRequests = 4 })
    }

    /// A poll carrying a message that is not base64 ends the session, and none of that
    /// poll's messages runs (they are all decoded before any is taken).
    @Test func aMessageThatIsNotBase64EndsTheSessionWithNoneOfItsPollRun() async throws {
        try await Self.run("garbled")
    }

    /// `maxPendingBytes`, inbound: segments of a message never finished end the session.
    @Test func unfinishedSegmentsPastMaxPendingBytesEndTheSession() async throws {
        try await Self.run("pending_in") { $0.maxPendingBytes = 4096 }
    }
}
