import Dispatch
import HearthStore
import HearthTesting
import Synchronization
import Testing
@testable import HearthPostgres

/// `/readyz`'s probe on PostgreSQL once the engine is closed (the server stopping).
@Suite struct PostgresReadinessTests {
    /// What `checkWritable` answered: nil when ready.
    static func readiness(_ engine: PostgresEngine) -> (any Error)? {
        let answer = Mutex<Result<Void, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        engine.checkWritable { result in
            answer.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        guard case .failure(let error)? = answer.withLock({ $0 }) else { return nil }
        return error
    }

    /// The store's `closed`, bare or as the write probe's failure.
    static func isClosed(_ error: (any Error)?) -> Bool {
        if let failure = error as? WriteFailure, case .store(let store) = failure, case .closed = store { return true }
        guard let error = error as? StoreError, case .closed = error else { return false }
        return true
    }

    /// Closed is said as closed, also once the lease, no longer renewed after the close,
    /// has run out on the engine's clock (it was said as "no lease": the database cannot
    /// be reached).
    @Test func aClosedEngineSaysItIsClosedAfterItsLeaseRanOut() throws {
        let url = try PostgresCluster.shared().makeDatabase()
        let now = Mutex<Int64>(WallClock.milliseconds())
        let engine = try PostgresEngine(url: url, clock: { now.withLock { $0 } })
        #expect(Self.readiness(engine) == nil)
        engine.close()
        #expect(Self.isClosed(Self.readiness(engine)))
        now.withLock { $0 += 3_600_000 }
        #expect(!engine.holdsLease)
        #expect(Self.isClosed(Self.readiness(engine)), "\(String(describing: Self.readiness(engine)))")
    }
}
