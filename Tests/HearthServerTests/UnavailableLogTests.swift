import Testing
@testable import HearthServer

/// The log lines for requests answered 503 because the store is unavailable, from
/// literals: the first at once, then at most one per `intervalMilliseconds`, each
/// counting the answers it stands for.
@Suite struct UnavailableLogTests {
    @Test func theFirstAnswerIsLoggedAtOnceAndTheRestOncePerInterval() {
        let interval = UnavailableThrottle.intervalMilliseconds
        var throttle = UnavailableThrottle()
        #expect(throttle.answered(at: 1_000) == 1)
        for step in 1...99 { #expect(throttle.answered(at: 1_000 + Int64(step)) == nil) }
        // One millisecond short of the interval: still quiet.
        #expect(throttle.answered(at: 1_000 + interval - 1) == nil)
        // At the interval: one line for the 100 answers since the first line.
        #expect(throttle.answered(at: 1_000 + interval) == 101)
        // A lone answer long after is logged at once, for itself.
        #expect(throttle.answered(at: 1_000 + 10 * interval) == 1)
    }
}
