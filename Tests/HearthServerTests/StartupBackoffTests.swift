import HearthStore
import Testing
@testable import HearthServer

/// The pauses of a node waiting for its database at start, from literals.
@Suite struct StartupBackoffTests {
    /// From `firstDelaySeconds`, doubling, capped at `maxDelaySeconds`.
    @Test func pausesDoubleUpToTheirCap() {
        let backoff = StartupBackoff(limitSeconds: 1_000)
        let pauses = (1...7).map { backoff.delay(afterFailures: $0, elapsed: 0) }
        #expect(pauses == [0.5, 1, 2, 4, 8, StartupBackoff.maxDelaySeconds, StartupBackoff.maxDelaySeconds])
        #expect(backoff.delay(afterFailures: 10_000, elapsed: 0) == StartupBackoff.maxDelaySeconds)
    }

    /// The last pause ends at the limit; at the limit, or with no wait at all, it gives up.
    @Test func itGivesUpAtTheLimit() {
        let backoff = StartupBackoff(limitSeconds: 120)
        #expect(backoff.delay(afterFailures: 9, elapsed: 115) == 5)
        #expect(backoff.delay(afterFailures: 9, elapsed: 119.75) == 0.25)
        #expect(backoff.delay(afterFailures: 9, elapsed: 120) == nil)
        #expect(StartupBackoff(limitSeconds: 0).delay(afterFailures: 1, elapsed: 0) == nil)
    }

    /// A database out of reach or out of room passes; a refused schema or bad data does not.
    @Test func onlyAnUnreachableOrFullDatabaseIsWaitedFor() {
        func engine(_ kind: EngineFailure.Kind) -> StoreError {
            .engine(EngineFailure(engine: "postgres", code: "x", kind: kind, message: "m", operation: "connect"))
        }
        #expect(StartupBackoff.isTransient(engine(.unavailable)))
        #expect(StartupBackoff.isTransient(engine(.full)))
        #expect(!StartupBackoff.isTransient(engine(.other)))
        #expect(!StartupBackoff.isTransient(.schemaTooNew(found: 9, known: 8)))
        #expect(!StartupBackoff.isTransient(.corrupt("x")))
    }
}
