import Testing
@testable import HearthHTTP

/// Timeouts as decisions over an injected clock: no sleeps, no sockets.
@Suite("ConnectionLifecycle")
struct ConnectionLifecycleTests {
    static let second: Nanoseconds = 1_000_000_000

    static let limits: HTTPLimits = {
        var limits = HTTPLimits()
        limits.headerReadTimeout = 10
        limits.bodyReadTimeout = 30
        limits.writeTimeout = 20
        limits.idleTimeout = 60
        return limits
    }()

    @Test func newConnectionThatSendsNothingGets408AfterTheHeaderTimeout() {
        let lifecycle = ConnectionLifecycle(limits: Self.limits, now: 100 * Self.second)
        #expect(lifecycle.check(now: 109 * Self.second) == .none)
        #expect(lifecycle.deadline == 110 * Self.second)
        #expect(lifecycle.check(now: 110 * Self.second) == .respondTimeoutAndClose)
    }

    @Test func slowHeaderGets408() {
        var lifecycle = ConnectionLifecycle(limits: Self.limits, now: 0)
        lifecycle.inputParsed(.head, now: 1 * Self.second)
        // More header bytes do not restart the clock: the whole head must arrive in time.
        lifecycle.inputParsed(.head, now: 9 * Self.second)
        #expect(lifecycle.check(now: 9 * Self.second) == .none)
        #expect(lifecycle.check(now: 10 * Self.second) == .respondTimeoutAndClose)
    }

    @Test func idleKeepAliveConnectionIsClosedSilently() {
        var lifecycle = ConnectionLifecycle(limits: Self.limits, now: 0)
        lifecycle.requestDispatched()
        #expect(lifecycle.check(now: 1_000 * Self.second) == .none)  // the handler owns the time
        lifecycle.responseQueued(now: 1_000 * Self.second)
        lifecycle.outputDrained(now: 1_001 * Self.second)
        #expect(lifecycle.phase == .idle(since: 1_001 * Self.second))
        #expect(lifecycle.check(now: 1_060 * Self.second) == .none)
        #expect(lifecycle.check(now: 1_061 * Self.second) == .close)
    }

    @Test func firstByteOfTheNextRequestStartsTheHeaderClock() {
        var lifecycle = ConnectionLifecycle(limits: Self.limits, now: 0)
        lifecycle.requestDispatched()
        lifecycle.responseQueued(now: 0)
        lifecycle.outputDrained(now: 0)
        lifecycle.inputParsed(.betweenRequests, now: 30 * Self.second)
        #expect(lifecycle.phase == .idle(since: 0))
        lifecycle.inputParsed(.head, now: 50 * Self.second)
        #expect(lifecycle.check(now: 59 * Self.second) == .none)
        #expect(lifecycle.check(now: 60 * Self.second) == .respondTimeoutAndClose)
    }

    @Test func bodyTimeoutCountsFromTheLastProgress() {
        var lifecycle = ConnectionLifecycle(limits: Self.limits, now: 0)
        // Progress means bytes (above the rate floor, so only the idle clock matters here).
        lifecycle.inputParsed(.body, now: 1 * Self.second, bodyBytes: 64 * 1024)
        lifecycle.inputParsed(.body, now: 25 * Self.second, bodyBytes: 128 * 1024)
        #expect(lifecycle.check(now: 54 * Self.second) == .none)
        #expect(lifecycle.check(now: 55 * Self.second) == .respondTimeoutAndClose)
    }

    @Test func stalledWriteIsClosed() {
        var lifecycle = ConnectionLifecycle(limits: Self.limits, now: 0)
        lifecycle.requestDispatched()
        lifecycle.responseQueued(now: 0)
        lifecycle.wrote(now: 15 * Self.second)
        #expect(lifecycle.check(now: 34 * Self.second) == .none)
        #expect(lifecycle.check(now: 35 * Self.second) == .close)
    }

    @Test func lingeringCloseIsBounded() {
        var lifecycle = ConnectionLifecycle(limits: Self.limits, now: 0)
        lifecycle.lingerStarted(now: 5 * Self.second)
        #expect(lifecycle.check(now: 6 * Self.second) == .none)
        #expect(lifecycle.check(now: 7 * Self.second) == .close)
    }

    @Test func interimContinueDoesNotMakeTheConnectionIdle() {
        var lifecycle = ConnectionLifecycle(limits: Self.limits, now: 0)
        lifecycle.inputParsed(.body, now: 0)
        lifecycle.outputDrained(now: 1 * Self.second)  // 100 Continue written
        #expect(lifecycle.phase == .readingBody(lastProgress: 0))
    }

    @Test func shutdownClosesOnlyConnectionsWithNothingInProgress() {
        var lifecycle = ConnectionLifecycle(limits: Self.limits, now: 0)
        #expect(lifecycle.isIdle(parserPhase: .betweenRequests))
        #expect(!lifecycle.isIdle(parserPhase: .head))
        lifecycle.requestDispatched()
        #expect(!lifecycle.isIdle(parserPhase: .betweenRequests))
    }

    @Test func closedConnectionHasNoDeadline() {
        var lifecycle = ConnectionLifecycle(limits: Self.limits, now: 0)
        lifecycle.closed()
        #expect(lifecycle.deadline == nil)
        #expect(lifecycle.check(now: .max) == .none)
    }
}
