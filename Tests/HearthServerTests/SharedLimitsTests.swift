import HearthStore
import HearthTesting
import Synchronization
import Testing
@testable import HearthServer
import HearthAccounts

/// Rate limits hold for every node together when the engine is shared: two
/// engines on one PostgreSQL database stand for two nodes, each with its own limiters.
@Suite(.enabled(if: PostgresTests.enabled)) struct SharedLimitsTests {
    final class Clock: Sendable {
        private let seconds = Mutex<Int64>(1_000_000)
        var now: Int64 { seconds.withLock { $0 } }
        func advance(_ by: Int64) { seconds.withLock { $0 += by } }
    }

    static func twoNodes() throws -> (any StorageEngine, any StorageEngine) {
        let url = try PostgresCluster.shared().makeDatabase()
        return (try Engines.open(.postgres(url: url)), try Engines.open(.postgres(url: url)))
    }

    @Test func aWindowLimitCountsAttemptsOnEveryNode() throws {
        let (a, b) = try Self.twoNodes()
        defer { a.close(); b.close() }
        let clock = Clock()
        let onA = RateLimiter(limit: 3, clock: { clock.now }, shared: a.limitCounters, name: "address")
        let onB = RateLimiter(limit: 3, clock: { clock.now }, shared: b.limitCounters, name: "address")
        #expect(onA.attempt("203.0.113.9") == nil)
        #expect(onB.attempt("203.0.113.9") == nil)
        #expect(onA.attempt("203.0.113.9") == nil)
        // The fourth attempt, on either node, is over the limit of the whole window.
        #expect(onB.attempt("203.0.113.9") == 60)
        #expect(onA.attempt("203.0.113.9") == 60)
        #expect(onA.attempt("198.51.100.1") == nil)  // another key has its own count
        clock.advance(59)
        #expect(onB.attempt("203.0.113.9") == 1)
        clock.advance(1)
        #expect(onB.attempt("203.0.113.9") == nil)  // a new window
    }

    @Test func wrongPasswordsOnEveryNodeCountForTheSamePair() throws {
        let (a, b) = try Self.twoNodes()
        defer { a.close(); b.close() }
        let clock = Clock()
        let onA = SignInThrottle(clock: { clock.now }, shared: a.limitCounters)
        let onB = SignInThrottle(clock: { clock.now }, shared: b.limitCounters)
        // The free failures, spread over both nodes.
        for attempt in 0..<SignInThrottle.freeFailures {
            #expect((attempt % 2 == 0 ? onA : onB).attempt(account: "alice@example.com", address: "203.0.113.9") == nil)
        }
        // The next one waits on both nodes, exactly as on one.
        #expect(onA.attempt(account: "alice@example.com", address: "203.0.113.9") == Int(SignInThrottle.firstBackoffSeconds))
        #expect(onB.attempt(account: "alice@example.com", address: "203.0.113.9") == Int(SignInThrottle.firstBackoffSeconds))
        // The owner's own address is not held back.
        #expect(onB.attempt(account: "alice@example.com", address: "198.51.100.7") == nil)
        // A success on one node forgets the pair on both.
        onB.succeeded(account: "alice@example.com", address: "203.0.113.9")
        #expect(onA.attempt(account: "alice@example.com", address: "203.0.113.9") == nil)
    }
}
