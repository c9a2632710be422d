import Testing
@testable import HearthHTTP

/// The bound on input held for incomplete requests and messages, from
/// literals: `HTTPLimits.maxIncompleteBytes`, `maxIncompleteBytesPerAddress`,
/// `alwaysHeldBytes`.
@Suite("Incomplete input: the bounds")
struct IncompleteBytesTests {
    static let always = HTTPLimits.alwaysHeldBytes

    @Test func theAddressShareIsCrossedAndSmallHoldingsAreAlwaysKept() {
        let bytes = IncompleteBytes(limit: 100 * Self.always, perAddress: 2 * Self.always)
        #expect(bytes.account("a", from: 0, to: Self.always) == .keep)
        #expect(bytes.account("a", from: 0, to: Self.always) == .keep)  // at the share, not past it
        #expect(bytes.account("a", from: 0, to: Self.always + 1) == .addressFull)
        #expect(bytes.account("a", from: Self.always + 1, to: 0) == .keep)  // the refused one released
        #expect(bytes.held(by: "a") == 2 * Self.always)
        // A connection holding no more than `alwaysHeldBytes` is kept, whatever its address holds.
        #expect(bytes.account("a", from: 0, to: Self.always) == .keep)
        #expect(bytes.held(by: "a") == 3 * Self.always)
        // Another address has its own share; shrinking is never refused.
        #expect(bytes.account("b", from: 0, to: 2 * Self.always) == .keep)
        #expect(bytes.account("a", from: Self.always, to: Self.always - 1) == .keep)
        #expect(bytes.total.load(ordering: .relaxed) == 5 * Self.always - 1)
    }

    @Test func theServerWideBoundIsCrossed() {
        let bytes = IncompleteBytes(limit: 3 * Self.always, perAddress: 100 * Self.always)
        #expect(bytes.account("a", from: 0, to: 2 * Self.always) == .keep)
        #expect(bytes.account("b", from: 0, to: Self.always) == .keep)
        #expect(bytes.account("c", from: 0, to: Self.always + 1) == .serverFull)
        #expect(bytes.account("c", from: Self.always + 1, to: 0) == .keep)
        #expect(bytes.account("a", from: 2 * Self.always, to: 0) == .keep)
        #expect(bytes.account("c", from: 0, to: 2 * Self.always) == .keep)  // room again
        #expect(bytes.held(by: "a") == 0 && bytes.held(by: "c") == 2 * Self.always)
    }
}
