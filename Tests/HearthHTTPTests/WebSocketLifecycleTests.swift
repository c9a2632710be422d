import Testing
@testable import HearthHTTP

/// The session's clocks over literal instants (no sleeps), as `ConnectionLifecycleTests`.
@Suite("WebSocket: lifecycle")
struct WebSocketLifecycleTests {
    static let second: UInt64 = 1_000_000_000
    static var limits: WebSocketLimits {
        var limits = WebSocketLimits()
        limits.pingInterval = 30
        limits.pongTimeout = 10
        return limits
    }

    @Test func silenceBringsAPingNotAClose() {
        var lifecycle = WebSocketLifecycle(limits: Self.limits, now: 0)
        #expect(lifecycle.check(now: 30 * Self.second - 1) == .none)
        #expect(lifecycle.check(now: 30 * Self.second) == .sendPing)
        lifecycle.pingSent(now: 30 * Self.second)
        #expect(lifecycle.check(now: 40 * Self.second - 1) == .none)
        // Anything heard (the pong) starts the silence clock again.
        lifecycle.heard(now: 31 * Self.second)
        #expect(lifecycle.check(now: 40 * Self.second) == .none)
        #expect(lifecycle.check(now: 61 * Self.second) == .sendPing)
    }

    @Test func noAnswerToAPingClosesTheConnection() {
        var lifecycle = WebSocketLifecycle(limits: Self.limits, now: 0)
        lifecycle.pingSent(now: 30 * Self.second)
        #expect(lifecycle.check(now: 40 * Self.second) == .close)
    }

    @Test func framesFromThePeerPostponeThePing() {
        var lifecycle = WebSocketLifecycle(limits: Self.limits, now: 0)
        lifecycle.heard(now: 20 * Self.second)
        #expect(lifecycle.check(now: 30 * Self.second) == .none)
        #expect(lifecycle.deadline == 50 * Self.second)
    }

    /// `partialMessageTimeout`: a message that stops growing is dropped, whatever pings
    /// say about the peer; growth restarts the clock, a whole message stops it.
    @Test func aMessageThatStopsGrowingIsDropped() {
        var limits = Self.limits
        limits.partialMessageTimeout = 5
        var lifecycle = WebSocketLifecycle(limits: limits, now: 0)
        lifecycle.holding(100_000, now: 1 * Self.second)
        #expect(lifecycle.deadline == 6 * Self.second)
        #expect(lifecycle.check(now: 6 * Self.second - 1) == .none)
        lifecycle.heard(now: 4 * Self.second)  // a ping between fragments
        lifecycle.holding(100_000, now: 4 * Self.second)
        lifecycle.holding(60_000, now: 5 * Self.second)  // bytes handed on to the application
        #expect(lifecycle.check(now: 6 * Self.second) == .dropPartialMessage)
        lifecycle.holding(200_000, now: 6 * Self.second)  // it grew
        #expect(lifecycle.check(now: 11 * Self.second - 1) == .none)
        #expect(lifecycle.check(now: 11 * Self.second) == .dropPartialMessage)
        lifecycle.holding(0, now: 11 * Self.second)  // whole
        #expect(lifecycle.check(now: 11 * Self.second) == .none)
        #expect(lifecycle.deadline == 34 * Self.second)  // the ping clock from the last frame heard
    }

    @Test func afterOurCloseNoClockRuns() {
        // The connection's lingering close bounds the wait for the peer's answer.
        var lifecycle = WebSocketLifecycle(limits: Self.limits, now: 0)
        lifecycle.closeSent(now: 10 * Self.second)
        #expect(!lifecycle.isOpen)
        lifecycle.heard(now: 12 * Self.second)  // data after our close does not reopen it
        #expect(lifecycle.deadline == nil)
        #expect(lifecycle.check(now: .max) == .none)
    }
}
