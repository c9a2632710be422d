import Testing
@testable import HearthServer

/// The bytes of queued onDisconnect operations, per address and in all.
@Suite struct OnDisconnectBudgetTests {
    @Test func anAddressAndTheServerAreEachHeldToTheirBound() {
        let budget = OnDisconnectBudget(perAddress: 1_000, total: 1_500)
        #expect(budget.reserve(600, for: "a") == nil)
        #expect(budget.reserve(400, for: "a") == nil)  // exactly the address's bound
        #expect(budget.reserve(1, for: "a") == .address)
        #expect(budget.held(by: "a") == 1_000)
        #expect(budget.reserve(600, for: "b") == .server)  // 1,600 in all
        #expect(budget.reserve(500, for: "b") == nil)
        #expect(budget.heldInAll == 1_500)
        // A refusal takes nothing; a release gives back what was taken.
        budget.release(600, for: "a")
        #expect(budget.held(by: "a") == 400 && budget.heldInAll == 900)
        #expect(budget.reserve(600, for: "a") == nil)
        budget.release(1_000, for: "a")
        budget.release(500, for: "b")
        #expect(budget.held(by: "a") == 0 && budget.held(by: "b") == 0 && budget.heldInAll == 0)
        budget.release(0, for: "c")
        #expect(budget.heldInAll == 0)
    }
}
