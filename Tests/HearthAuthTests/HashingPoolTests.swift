import Dispatch
import Glibc
import Synchronization
import Testing
@testable import HearthAuth

@Suite("HashingPool")
struct HashingPoolTests {
    /// Tracks how many jobs run at once.
    final class Gauge: Sendable {
        private let state = Mutex((current: 0, peak: 0))
        func enter() { state.withLock { $0.current += 1; $0.peak = max($0.peak, $0.current) } }
        func leave() { state.withLock { $0.current -= 1 } }
        var peak: Int { state.withLock { $0.peak } }
    }

    @Test func concurrentSubmissionsNeverExceedWidth() async {
        let width = 3
        let pool = HashingPool(width: width, maxBacklog: 200)
        let gauge = Gauge()
        let collector = Collector<Result<Int, HashingPoolError>>(expecting: 200)
        DispatchQueue.concurrentPerform(iterations: 200) { i in
            pool.submit({
                gauge.enter()
                usleep(1000)
                gauge.leave()
                return i
            }, completion: collector.record)
        }
        let results = await collector.wait()
        let values = results.compactMap { try? $0.get() }
        #expect(values.count == 200)
        #expect(Set(values) == Set(0..<200))
        #expect(gauge.peak <= width)
        #expect(gauge.peak >= 2)   // it did run in parallel
        #expect(pool.backlogCount == 0)
    }

    @Test func overflowGivesOverloaded() async {
        let pool = HashingPool(width: 1, maxBacklog: 4)
        let gate = DispatchSemaphore(value: 0)
        let started = DispatchSemaphore(value: 0)
        let collector = Collector<Result<Int, HashingPoolError>>(expecting: 10)
        pool.submit({ started.signal(); gate.wait(); return 0 }, completion: collector.record)
        started.wait()   // the single worker is now busy
        for i in 1..<10 {
            pool.submit({ i }, completion: collector.record)
        }
        #expect(pool.backlogCount == 4)
        gate.signal()
        let results = await collector.wait()
        let succeeded = results.compactMap { try? $0.get() }.sorted()
        let overloaded = results.filter { $0 == .failure(.overloaded) }
        #expect(succeeded == [0, 1, 2, 3, 4])   // the running job and the four queued, FIFO
        #expect(overloaded.count == 5)
    }

    @Test func zeroBacklogRefusesWhenBusy() async throws {
        let pool = HashingPool(width: 1, maxBacklog: 0)
        let gate = DispatchSemaphore(value: 0)
        let started = DispatchSemaphore(value: 0)
        let collector = Collector<Result<Int, HashingPoolError>>(expecting: 1)
        pool.submit({ started.signal(); gate.wait(); return 1 }, completion: collector.record)
        started.wait()
        await #expect(throws: HashingPoolError.overloaded) { try await pool.run { 2 } }
        gate.signal()
        #expect(await collector.wait() == [.success(1)])
        #expect(try await pool.run { 3 } == 3)
    }

    @Test func runsPasswordJobs() async throws {
        let pool = HashingPool(width: 2)
        let hasher = PasswordHasher(parameters: try ScryptParameters(logN: 10, r: 8, p: 1))
        let phc = try await pool.run { try? hasher.hash("pw") }
        let stored = try #require(phc)
        #expect(try await pool.run { (try? hasher.verify("pw", against: stored)) ?? false })
    }
}
