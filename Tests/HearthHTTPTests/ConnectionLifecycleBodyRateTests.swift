import Testing
@testable import HearthHTTP

/// The request-body rate floor (`HTTPLimits.minBodyBytesPerSecond`), with an injected clock.
@Suite("ConnectionLifecycle: body rate floor")
struct ConnectionLifecycleBodyRateTests {
    static let second: Nanoseconds = 1_000_000_000
    static var limits: HTTPLimits {
        var limits = HTTPLimits()
        limits.bodyReadTimeout = 30
        limits.minBodyBytesPerSecond = 1024
        return limits
    }

    @Test func aBodyTrickledAByteEveryTenSecondsTimesOut() {
        var lifecycle = ConnectionLifecycle(limits: Self.limits, now: 0)
        lifecycle.inputParsed(.body, now: 0, bodyBytes: 0)
        for i in 1...3 { lifecycle.inputParsed(.body, now: UInt64(i) * 10 * Self.second, bodyBytes: i) }
        // Never idle for 30 s (the old rule alone would wait until 60 s), but 3 bytes buy
        // only 3 ms beyond the 30 s grace.
        #expect(lifecycle.check(now: 30 * Self.second) == .none)
        #expect(lifecycle.check(now: 31 * Self.second) == .respondTimeoutAndClose)
    }

    @Test func aSlowButSteadyUploadKeepsGoing() {
        var lifecycle = ConnectionLifecycle(limits: Self.limits, now: 0)
        lifecycle.inputParsed(.body, now: 0, bodyBytes: 0)
        // 2 KiB/s for 100 s: well above the 1 KiB/s floor.
        for t in 1...100 { lifecycle.inputParsed(.body, now: UInt64(t) * Self.second, bodyBytes: t * 2048) }
        #expect(lifecycle.check(now: 100 * Self.second) == .none)
        // Stalled from there: the idle clock still applies (30 s after the last byte).
        #expect(lifecycle.check(now: 129 * Self.second) == .none)
        #expect(lifecycle.check(now: 130 * Self.second) == .respondTimeoutAndClose)
    }

    @Test func justUnderTheFloorFailsOnceTheGraceIsSpent() {
        var lifecycle = ConnectionLifecycle(limits: Self.limits, now: 0)
        lifecycle.inputParsed(.body, now: 0, bodyBytes: 0)
        // 1,000 B/s: behind the floor by 24 B each second; after 30 s of grace the
        // deadline (30 + 0.977 t) falls behind the clock at t ≈ 1,280 s.
        var t: UInt64 = 0
        var decision = ConnectionLifecycle.Decision.none
        while decision == .none && t < 2_000 {
            t += 1
            lifecycle.inputParsed(.body, now: t * Self.second, bodyBytes: Int(t) * 1000)
            decision = lifecycle.check(now: t * Self.second)
        }
        #expect(decision == .respondTimeoutAndClose)
        #expect(t > 1_200 && t < 1_400)
    }

    @Test func aZeroFloorTurnsTheRuleOff() {
        var limits = Self.limits
        limits.minBodyBytesPerSecond = 0
        var lifecycle = ConnectionLifecycle(limits: limits, now: 0)
        lifecycle.inputParsed(.body, now: 0, bodyBytes: 0)
        for i in 1...5 { lifecycle.inputParsed(.body, now: UInt64(i) * 10 * Self.second, bodyBytes: i) }
        #expect(lifecycle.check(now: 79 * Self.second) == .none)
        #expect(lifecycle.check(now: 80 * Self.second) == .respondTimeoutAndClose)
    }

    @Test func theFloorRestartsWithEachRequest() {
        var lifecycle = ConnectionLifecycle(limits: Self.limits, now: 0)
        lifecycle.inputParsed(.body, now: 0, bodyBytes: 0)
        lifecycle.requestDispatched()
        lifecycle.responseQueued(now: 100 * Self.second)
        lifecycle.outputDrained(now: 100 * Self.second)
        lifecycle.inputParsed(.body, now: 100 * Self.second, bodyBytes: 0)
        #expect(lifecycle.check(now: 129 * Self.second) == .none)
        #expect(lifecycle.check(now: 130 * Self.second) == .respondTimeoutAndClose)
    }
}
