import Testing
@testable import HearthDatabase

/// When a repeated warning is written, from literals: the first occurrence at once, then
/// at most one line per interval, each counting the occurrences it stands for.
@Suite struct LogIntervalTests {
    @Test func theFirstIsLoggedAtOnceAndTheRestOncePerInterval() {
        let interval: Int64 = 10_000
        var log = LogInterval(milliseconds: interval)
        #expect(log.occurred(at: 1_000) == 1)
        for step in 1...99 { #expect(log.occurred(at: 1_000 + Int64(step)) == nil) }
        // One millisecond short of the interval: still quiet.
        #expect(log.occurred(at: 1_000 + interval - 1) == nil)
        // At the interval: one line for the 100 occurrences since the first line.
        #expect(log.occurred(at: 1_000 + interval) == 101)
        // A lone occurrence long after is logged at once, for itself.
        #expect(log.occurred(at: 1_000 + 10 * interval) == 1)
    }
}
