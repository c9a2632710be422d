import HearthStore
import Testing
@testable import HearthPostgres

/// What a failed batch tells its writes, from literals: "nothing was written"
/// only when the batch certainly did not commit.
@Suite struct LostCommitTests {
    /// Only a batch that wrote and whose COMMIT was sent may have committed; it asks its mark.
    @Test(arguments: [
        (false, false, PostgresEngine.FailedBatch.notWritten),
        (false, true, .notWritten),  // a statement failed before the COMMIT: rolled back
        (true, false, .notWritten),  // nothing written, nothing marked
        (true, true, .askTheMark),  // the COMMIT was sent: only the mark can tell
    ])
    func aFailedBatchAsksItsMarkOnlyOnceItsCommitWasSent(commitSent: Bool, wrote: Bool, expected: PostgresEngine.FailedBatch) {
        #expect(PostgresEngine.FailedBatch.after(commitSent: commitSent, wrote: wrote) == expected)
    }

    /// A COMMIT sent last in one exchange with other statements: it certainly did not run
    /// only when the server refused a statement before it on a connection still up.
    @Test(arguments: [
        (0, false, true),  // nothing answered, the connection lost: it may have run
        (0, true, false),  // the server refused the first statement: none after it ran
        (1, false, true),  // the COMMIT's own answer was lost
        (1, true, true),  // the COMMIT itself failed: it was sent, the mark decides
    ])
    func aCommitSentWithOtherStatementsMayHaveRunUnlessOneBeforeItWasRefused(answered: Int, refusedByServer: Bool, expected: Bool) {
        #expect(PostgresEngine.FailedBatch.commitMayHaveRun(answered: answered, commitAt: 1, refusedByServer: refusedByServer) == expected)
    }

    /// A mark found: acknowledged. No mark: nothing was written (`.store`, safe to retry).
    /// The lookup failed (the database still down): outcome unknown, never "not written".
    @Test func theMarksAnswerDecidesTheWritesAnswer() {
        #expect(PostgresEngine.LostCommit.committed(last: 5).failure == nil)
        #expect(PostgresEngine.LostCommit.committed(last: 5).batchLast == 5)
        #expect(PostgresEngine.LostCommit.notCommitted.batchLast == nil)
        guard case .store(let store)? = PostgresEngine.LostCommit.notCommitted.failure else {
            Issue.record("not committed is not a plain store failure"); return
        }
        #expect(store.description.contains("nothing was written"))
        guard case .outcomeUnknown(let unknown)? = PostgresEngine.LostCommit.unknown("connection refused").failure else {
            Issue.record("a failed lookup is not outcome unknown"); return
        }
        #expect(unknown.description.contains("unknown (connection refused)"))
    }
}
