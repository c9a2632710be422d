/// The rule for one use of a refresh token, shared by every engine so that it exists once.
///
/// An engine reads the presented token's row (locked for the transaction), asks
/// `successorToCheck` whether the successor's state matters, reads it if so, and then
/// carries out `decide`'s answer in the same transaction. The rule itself touches no
/// database, so it is tested from literals (`RefreshRotationRuleTests`).
package struct PresentedRefreshToken: Sendable, Equatable {
    package var uid: String
    package var family: String
    /// When it was rotated, ms; nil while current.
    package var usedAt: Int64?
    package var revoked: Bool
    package var userDisabled: Bool
    /// The family's sign-in (when, how, with which claims).
    package var signIn: SignInRecord
    /// The successor made when it was rotated, and that successor sealed for a retry.
    package var successorHash: String?
    package var successorSealed: String?

    package init(uid: String, family: String, usedAt: Int64?, revoked: Bool, userDisabled: Bool, signIn: SignInRecord,
                 successorHash: String?, successorSealed: String?) {
        (self.uid, self.family, self.usedAt, self.revoked, self.userDisabled) = (uid, family, usedAt, revoked, userDisabled)
        (self.signIn, self.successorHash, self.successorSealed) = (signIn, successorHash, successorSealed)
    }

    /// What the engine must do.
    package enum Decision: Sendable, Equatable {
        /// Answer `.invalid`; write nothing.
        case invalid
        /// Mark the token used at `rotation.at` with `rotation.newHash` as its successor,
        /// insert the successor in the same family; answer `.rotated`.
        case rotate
        /// A retry of a rotation whose answer was lost; write nothing, answer `.retried`.
        case retry
        /// A replay: revoke the whole family; answer `.reused`.
        case revokeFamily
    }

    /// The successor whose state `decide` needs (whether it is still unused and not
    /// revoked), or nil when the decision does not depend on it.
    package func successorToCheck(for rotation: RefreshRotation) -> String? {
        guard !revoked, !userDisabled, let usedAt, let successorHash, let successorSealed, !successorSealed.isEmpty,
              rotation.at >= usedAt, rotation.at - usedAt <= rotation.retryWindow else { return nil }
        return successorHash
    }

    /// The decision, given whether the successor named by `successorToCheck` is unused
    /// and not revoked (ignored when that was nil).
    package func decide(_ rotation: RefreshRotation, successorUnused: Bool) -> Decision {
        if revoked || userDisabled { return .invalid }
        guard usedAt != nil else { return .rotate }
        if successorToCheck(for: rotation) != nil && successorUnused { return .retry }
        return .revokeFamily
    }

    /// The answer for `decision` (after the engine carried out its writes).
    package func outcome(of decision: Decision) -> RefreshOutcome {
        switch decision {
        case .invalid: return .invalid
        case .rotate: return .rotated(uid: uid, signIn: signIn)
        case .retry: return .retried(uid: uid, signIn: signIn, rotatedAt: usedAt ?? 0, sealedSuccessor: successorSealed ?? "")
        case .revokeFamily: return .reused(uid: uid)
        }
    }
}
