import HearthHTTP
import HearthStore
import Synchronization
import Testing
@testable import HearthServer
import HearthAccounts

/// Password guessing is slowed per (account, address) and per account,
/// the owner still gets in, and `Retry-After` is the true wait. Injected clocks, no sleeps.
@Suite struct SignInThrottleTests {
    final class Clock: Sendable {
        let seconds = Atomic<Int64>(1_795_560_000)
        var now: Int64 { seconds.load(ordering: .relaxed) }
        func advance(_ by: Int64) { seconds.add(by, ordering: .relaxed) }
    }

    @Test func freeFailuresThenDoublingWaitsThatAreExact() {
        let clock = Clock()
        let throttle = SignInThrottle(clock: { clock.now })
        for _ in 0..<SignInThrottle.freeFailures { #expect(throttle.attempt(account: "a", address: "x") == nil) }
        var expected: Int64 = SignInThrottle.firstBackoffSeconds
        for _ in 0..<12 {
            let wait = throttle.attempt(account: "a", address: "x")
            #expect(wait.map(Int64.init) == expected)
            clock.advance(expected - 1)
            #expect(throttle.attempt(account: "a", address: "x") == 1)  // one second early: still refused, and told so
            clock.advance(1)
            #expect(throttle.attempt(account: "a", address: "x") == nil)  // exactly when told
            expected = min(expected * 2, SignInThrottle.maxBackoffSeconds)
        }
        #expect(expected == SignInThrottle.maxBackoffSeconds)  // the cap was reached
        // Another address, or another account, is not held back by this pair.
        #expect(throttle.attempt(account: "a", address: "y") == nil)
        #expect(throttle.attempt(account: "b", address: "x") == nil)
        // A success forgets the pair's failures.
        clock.advance(SignInThrottle.maxBackoffSeconds)
        #expect(throttle.attempt(account: "a", address: "x") == nil)
        throttle.succeeded(account: "a", address: "x")
        for _ in 0..<SignInThrottle.freeFailures { #expect(throttle.attempt(account: "a", address: "x") == nil) }
        #expect(throttle.attempt(account: "a", address: "x") != nil)
        // Failures are forgotten after failureMemorySeconds.
        clock.advance(SignInThrottle.failureMemorySeconds)
        #expect(throttle.attempt(account: "a", address: "x") == nil)
    }

    @Test func pastTheAccountThresholdAddressesThatFailedWaitAndFreshOnesDoNot() {
        let clock = Clock()
        let throttle = SignInThrottle(clock: { clock.now })
        // Distributed guessing: one failure from each of accountFailureThreshold addresses.
        for index in 0..<SignInThrottle.accountFailureThreshold {
            #expect(throttle.attempt(account: "a", address: "bot\(index)") == nil)
        }
        // A bot address with one failure (under its free ones) now waits by the account's count.
        #expect(throttle.attempt(account: "a", address: "bot0") == Int(SignInThrottle.firstBackoffSeconds))
        // Progressive: accountFailureStep more failures (fresh addresses may still try once) double it.
        for index in 0..<SignInThrottle.accountFailureStep {
            #expect(throttle.attempt(account: "a", address: "late\(index)") == nil)
        }
        #expect(throttle.attempt(account: "a", address: "bot1") == Int(2 * SignInThrottle.firstBackoffSeconds))
        // The owner, from an address with no failure for this account, goes through.
        #expect(throttle.attempt(account: "a", address: "owner") == nil)
        throttle.succeeded(account: "a", address: "owner")
        #expect(throttle.attempt(account: "a", address: "owner") == nil)
    }

    @Test func memoryIsBounded() {
        let clock = Clock()
        let throttle = SignInThrottle(maxTrackedKeys: 10, clock: { clock.now })
        for index in 0..<100 { _ = throttle.attempt(account: "a\(index)", address: "x\(index)") }
        #expect(throttle.trackedKeys <= 10)
    }

    /// The slow guessing attack, over HTTP: one wrong password per second for one email,
    /// spread over 10 addresses (each far under the per-address limit), for 30 minutes; the
    /// owner signs in once a minute from their own address with the right password. Before,
    /// the owner was refused about half the time; now every time they get in, and the
    /// attacker's guesses are cut to a fraction.
    @Test func theAttackerIsSlowedAndTheOwnerGetsIn() async throws {
        let clock = Clock()
        let harness = try RouterHarness(clock: { clock.now * 1000 })
        _ = try harness.auth.service.signUp(email: "owner@example.com", password: "right-password")
        func signIn(_ password: String, from address: String) async -> HTTPResponse {
            let request = HTTPRequest(method: "POST", target: "/v1/accounts:signInWithPassword",
                                      body: Array(#"{"email":"owner@example.com","password":"\#(password)"}"#.utf8), remoteAddress: address)
            return await withCheckedContinuation { continuation in
                harness.router.handle(request, responder: HTTPResponder { continuation.resume(returning: $0) })
            }
        }
        let seconds = 30 * 60
        var guessed = 0, refused = 0, ownerIn = 0, ownerTries = 0
        var retryAfterTrue = true
        var notBefore: [String: Int64] = [:]
        for second in 0..<seconds {
            let address = "203.0.113.\(second % 10)"
            let response = await signIn("guess-\(second)", from: address)
            if response.status == 429 {
                refused += 1
                let wait = Int64(response.headers["Retry-After"] ?? "") ?? -1
                if let due = notBefore[address], clock.now + wait < due { retryAfterTrue = false }
                notBefore[address] = clock.now + wait
            } else {
                guessed += 1
                #expect(response.status == 400)
                // Told a wait earlier, it was not let through before it ended.
                if let due = notBefore[address], clock.now < due { retryAfterTrue = false }
            }
            if second % 60 == 30 {
                ownerTries += 1
                if await signIn("right-password", from: "198.51.100.7").status == 200 { ownerIn += 1 }
            }
            clock.advance(1)
        }
        #expect(ownerIn == ownerTries)
        #expect(retryAfterTrue)
        #expect(guessed + refused == seconds)
        #expect(guessed < seconds / 10, "the attacker got \(guessed) guesses in \(seconds) s")
    }
}
