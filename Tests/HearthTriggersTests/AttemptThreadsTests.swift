import Dispatch
import HearthTesting
import Synchronization
import Testing
@testable import HearthTriggers

/// The attempts' threads: started only when none is idle, reused, ended when idle.
@Suite struct AttemptThreadsTests {
    /// Jobs that each wait for `gate` and count how many run at once.
    final class Jobs: Sendable {
        let running = Mutex(0)
        let mostAtOnce = Mutex(0)
        let done = Mutex(0)
        let gate = DispatchSemaphore(value: 0)

        /// Counted as done once its thread is idle again (what the deliverer's attempts do).
        func job() -> AttemptThreads.Job {
            { [self] in
                let now = running.withLock { $0 += 1; return $0 }
                mostAtOnce.withLock { $0 = max($0, now) }
                gate.wait()
                running.withLock { $0 -= 1 }
                return { [self] in done.withLock { $0 += 1 } }
            }
        }
    }

    @Test func threadsAreStartedOnlyWhenNoneIsIdleAndKeptForTheNextJobs() async throws {
        // An hour: no thread may end of idleness while this test's task waits its turn.
        // With a minute, under the full suite (the test took 280 s there) one thread
        // ended between two jobs, which only a minute without work does, and another
        // started.
        let threads = AttemptThreads(idleMilliseconds: 3_600_000)
        defer { threads.close() }
        let jobs = Jobs()
        // One at a time: one thread for all of them.
        for index in 1...20 {
            threads.run(jobs.job())
            jobs.gate.signal()
            try await waitUntil("job \(index) done") { jobs.done.withLock { $0 } == index }
        }
        #expect(threads.counts.started == 1)
        // Eight at once: eight threads, each job on its own.
        for _ in 0..<8 { threads.run(jobs.job()) }
        try await waitUntil("eight running") { jobs.running.withLock { $0 } == 8 }
        #expect(threads.counts.started == 8)
        for _ in 0..<8 { jobs.gate.signal() }
        try await waitUntil("28 done") { jobs.done.withLock { $0 } == 28 }
        // Eight more at once: the same eight threads.
        for _ in 0..<8 { threads.run(jobs.job()) }
        try await waitUntil("eight running again") { jobs.running.withLock { $0 } == 8 }
        #expect(threads.counts == (alive: 8, started: 8))
        for _ in 0..<8 { jobs.gate.signal() }
        try await waitUntil("36 done") { jobs.done.withLock { $0 } == 36 }
        #expect(jobs.mostAtOnce.withLock { $0 } == 8)
        // `close` ends the idle ones now, not after their hour.
        threads.close()
        try await waitUntil("no thread left", showing: "\(threads.counts)") { threads.counts.alive == 0 }
        // A job after `close` still runs.
        threads.run(jobs.job())
        jobs.gate.signal()
        try await waitUntil("37 done") { jobs.done.withLock { $0 } == 37 }
    }

    @Test func idleThreadsEnd() async throws {
        let threads = AttemptThreads(idleMilliseconds: 20)
        let jobs = Jobs()
        for _ in 0..<4 { threads.run(jobs.job()) }
        try await waitUntil("four running") { jobs.running.withLock { $0 } == 4 }
        for _ in 0..<4 { jobs.gate.signal() }
        try await waitUntil("every thread ended", showing: "\(threads.counts)") { threads.counts.alive == 0 }
        #expect(threads.counts.started == 4 && jobs.done.withLock { $0 } == 4)
        // And new ones start for new work.
        threads.run(jobs.job())
        jobs.gate.signal()
        try await waitUntil("five done") { jobs.done.withLock { $0 } == 5 }
        #expect(threads.counts.started == 5)
    }
}
