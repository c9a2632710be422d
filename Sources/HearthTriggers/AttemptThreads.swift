import Dispatch
import Foundation
import Synchronization

/// The threads a trigger's attempts run on (each blocks for its whole HTTP exchange):
/// started as attempts need them, at most one per attempt under way, kept while work comes
/// and ended after `idleMilliseconds` without any. A thread per attempt, started and ended
/// each time, cost about an eighth of the server's CPU per delivery (clone, stack mapping, exit).
///
/// The deliverer bounds the attempts under way (`maxConcurrency`), so this never holds
/// more threads than that bound reached. `close()` ends the idle ones at once; one
/// running an attempt ends after it, once idle.
final class AttemptThreads: Sendable {
    /// How long a thread with nothing to run waits for more before it ends.
    static let defaultIdleMilliseconds = 5_000

    /// A job, and what it returns to run once its thread counts as idle again.
    typealias Job = @Sendable () -> @Sendable () -> Void

    private struct State {
        var jobs: [Job] = []
        var threads = 0
        /// Threads running a job.
        var busy = 0
        /// Threads ever started (tests).
        var started = 0
    }

    private let state = Mutex(State())
    /// One signal per job queued (and per thread told to end at `close`).
    private let work = DispatchSemaphore(value: 0)
    let idleMilliseconds: Int

    init(idleMilliseconds: Int = AttemptThreads.defaultIdleMilliseconds) {
        self.idleMilliseconds = idleMilliseconds
    }

    /// Runs `job` on an idle thread, or on a new one when none is idle. What `job` returns
    /// runs on the same thread after it counts as idle again: a job whose end lets the next
    /// one start (an attempt's outcome, which wakes the deliverer) ends that way, so the
    /// next finds this thread idle rather than starting another.
    func run(_ job: @escaping Job) {
        let spawn = state.withLock { state in
            state.jobs.append(job)
            guard state.threads - state.busy < state.jobs.count else { return false }
            state.threads += 1
            state.started += 1
            return true
        }
        if spawn { Thread.detachNewThread { [self] in loop() } }
        work.signal()
    }

    /// Ends the idle threads now rather than after `idleMilliseconds` (the deliverer
    /// stopped). A job run later still gets a thread.
    func close() {
        let idle = state.withLock { $0.threads - $0.busy - $0.jobs.count }
        for _ in 0..<max(0, idle) { work.signal() }
    }

    /// (threads alive, threads ever started).
    var counts: (alive: Int, started: Int) { state.withLock { ($0.threads, $0.started) } }

    private enum Step {
        case run(Job)
        case waitAgain
        case end
    }

    private func loop() {
        while true {
            let woken = work.wait(timeout: .now() + .milliseconds(idleMilliseconds)) == .success
            let step: Step = state.withLock { state in
                if woken, !state.jobs.isEmpty {
                    state.busy += 1
                    return .run(state.jobs.removeFirst())
                }
                // Woken without a job: `close` asked an idle thread to end. Timed out with
                // jobs queued: their signals are still to come, so wait for them.
                if !woken && !state.jobs.isEmpty { return .waitAgain }
                state.threads -= 1
                return .end
            }
            switch step {
            case .run(let job):
                let then = job()
                state.withLock { $0.busy -= 1 }
                then()
            case .waitAgain:
                continue
            case .end:
                return
            }
        }
    }
}
