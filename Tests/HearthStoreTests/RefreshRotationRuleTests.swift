import Testing
@testable import HearthStore

/// The refresh-token rule both engines carry out (`PresentedRefreshToken`), from literals.
@Suite struct RefreshRotationRuleTests {
    static let signIn = SignInRecord(at: 1_000, provider: "password", claims: nil)

    static func token(usedAt: Int64? = nil, revoked: Bool = false, disabled: Bool = false,
                      successor: String? = "next", sealed: String? = "sealed-next") -> PresentedRefreshToken {
        PresentedRefreshToken(uid: "u1", family: "f1", usedAt: usedAt, revoked: revoked, userDisabled: disabled, signIn: signIn,
                              successorHash: usedAt == nil ? nil : successor, successorSealed: usedAt == nil ? nil : sealed)
    }

    static func rotation(at: Int64, window: Int64 = 30_000) -> RefreshRotation {
        RefreshRotation(hash: "this", newHash: "new", sealedNew: "sealed-new", at: at, retryWindow: window)
    }

    @Test func aCurrentTokenIsRotatedWithoutLookingAtASuccessor() {
        let token = Self.token()
        #expect(token.successorToCheck(for: Self.rotation(at: 5_000)) == nil)
        #expect(token.decide(Self.rotation(at: 5_000), successorUnused: false) == .rotate)
        #expect(token.outcome(of: .rotate) == .rotated(uid: "u1", signIn: Self.signIn))
    }

    @Test func aRevokedTokenOrADisabledUserIsInvalidEvenWithinTheRetryWindow() {
        for token in [Self.token(revoked: true), Self.token(disabled: true),
                      Self.token(usedAt: 4_000, revoked: true), Self.token(usedAt: 4_000, disabled: true)] {
            #expect(token.successorToCheck(for: Self.rotation(at: 5_000)) == nil)
            #expect(token.decide(Self.rotation(at: 5_000), successorUnused: true) == .invalid)
        }
        #expect(Self.token(revoked: true).outcome(of: .invalid) == .invalid)
    }

    @Test func aUsedTokenWithinTheWindowWhoseSuccessorIsUnusedIsARetry() {
        let token = Self.token(usedAt: 4_000)
        let rotation = Self.rotation(at: 4_000 + 30_000)  // the window's last millisecond counts
        #expect(token.successorToCheck(for: rotation) == "next")
        #expect(token.decide(rotation, successorUnused: true) == .retry)
        #expect(token.outcome(of: .retry) == .retried(uid: "u1", signIn: Self.signIn, rotatedAt: 4_000, sealedSuccessor: "sealed-next"))
    }

    @Test func aUsedTokenWhoseSuccessorWasUsedIsAReplay() {
        let token = Self.token(usedAt: 4_000)
        #expect(token.decide(Self.rotation(at: 5_000), successorUnused: false) == .revokeFamily)
        #expect(token.outcome(of: .revokeFamily) == .reused(uid: "u1"))
    }

    @Test func aUsedTokenOutsideTheWindowIsAReplayWhateverItsSuccessor() {
        let token = Self.token(usedAt: 4_000)
        for rotation in [Self.rotation(at: 4_000 + 30_001), Self.rotation(at: 3_999), Self.rotation(at: 5_000, window: 0)] {
            #expect(token.successorToCheck(for: rotation) == nil)
            #expect(token.decide(rotation, successorUnused: true) == .revokeFamily)
        }
    }

    @Test func aUsedTokenWithoutASealedSuccessorIsAReplay() {
        for token in [Self.token(usedAt: 4_000, sealed: nil), Self.token(usedAt: 4_000, sealed: ""), Self.token(usedAt: 4_000, successor: nil)] {
            #expect(token.successorToCheck(for: Self.rotation(at: 5_000)) == nil)
            #expect(token.decide(Self.rotation(at: 5_000), successorUnused: true) == .revokeFamily)
        }
    }
}
