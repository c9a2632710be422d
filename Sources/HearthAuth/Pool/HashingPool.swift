import Dispatch
import Synchronization

/// Runs expensive password jobs (scrypt hashing and verification) at most `width` at a time,
/// with a bounded backlog (docs/design.md §6; docs/linux-notes.md pitfall 4).
///
/// Why: one scrypt at the default parameters takes ~87 ms of CPU and 32 MiB, so a burst of
/// sign-ins run unbounded would exhaust memory, and run on the I/O queues it would stall every
/// connection. Here each of `width` workers is a serial `DispatchQueue` (one thread while
/// busy, none while idle), so at most `width` jobs run and at most `width` × 32 MiB is live.
///
/// `submit` never blocks its caller: a job starts on an idle worker, else waits in a FIFO
/// backlog of at most `maxBacklog` jobs, else is refused at once with `.overloaded`. A worker
/// that finishes a job takes the next one from the backlog before going idle.
public final class HashingPool: Sendable {
    /// Workers when none are given: enough to use two cores without starving I/O.
    public static let defaultWidth = 2
    /// Jobs allowed to wait when none is given: at ~87 ms each over 2 workers, a full
    /// backlog drains in under 3 s, past which a client is better told to retry.
    public static let defaultMaxBacklog = 64

    private struct State {
        var idleWorkers: [Int]
        var backlog: [@Sendable () -> Void] = []
        var backlogHead = 0

        var backlogCount: Int { backlog.count - backlogHead }

        mutating func popBacklog() -> (@Sendable () -> Void)? {
            guard backlogHead < backlog.count else { return nil }
            let job = backlog[backlogHead]
            backlogHead += 1
            // Compact once the consumed prefix dominates, keeping memory bounded.
            if backlogHead >= 32 && backlogHead * 2 >= backlog.count {
                backlog.removeFirst(backlogHead)
                backlogHead = 0
            }
            return job
        }
    }

    private enum Admission { case start(Int), queued, refused }

    public let width: Int
    public let maxBacklog: Int
    private let workers: [DispatchQueue]
    private let state: Mutex<State>

    /// A pool of `width` workers (≥ 1) and a backlog of `maxBacklog` jobs (≥ 0).
    public init(width: Int = defaultWidth, maxBacklog: Int = defaultMaxBacklog, label: String = "hearth.hashing") {
        precondition(width >= 1, "HashingPool needs at least one worker")
        precondition(maxBacklog >= 0, "HashingPool backlog must not be negative")
        self.width = width
        self.maxBacklog = maxBacklog
        self.workers = (0..<width).map { DispatchQueue(label: "\(label).\($0)", qos: .userInitiated) }
        self.state = Mutex(State(idleWorkers: Array((0..<width).reversed())))
    }

    /// Runs `job` on a worker when one is free and then calls `completion` with its result
    /// on that worker. When the backlog is full, `completion(.failure(.overloaded))` is
    /// called before `submit` returns, on the caller's thread, and `job` never runs.
    public func submit<T: Sendable>(
        _ job: @escaping @Sendable () -> T,
        completion: @escaping @Sendable (Result<T, HashingPoolError>) -> Void
    ) {
        let work: @Sendable () -> Void = { completion(.success(job())) }
        let admission = state.withLock { state -> Admission in
            if let worker = state.idleWorkers.popLast() { return .start(worker) }
            guard state.backlogCount < maxBacklog else { return .refused }
            state.backlog.append(work)
            return .queued
        }
        switch admission {
        case .start(let worker): workers[worker].async { self.run(work, on: worker) }
        case .queued: break
        case .refused: completion(.failure(.overloaded))
        }
    }

    /// `submit` for async callers: suspends (without blocking a thread) until the job ran.
    /// Throws `.overloaded` at once when the backlog is full. Cancelling the task does not
    /// cancel a job that was admitted.
    public func run<T: Sendable>(_ job: @escaping @Sendable () -> T) async throws(HashingPoolError) -> T {
        let result: Result<T, HashingPoolError> = await withCheckedContinuation { continuation in
            submit(job) { continuation.resume(returning: $0) }
        }
        return try result.get()
    }

    /// The number of jobs waiting (not running), for metrics.
    public var backlogCount: Int { state.withLock { $0.backlogCount } }

    /// Runs `job`, then backlog jobs, on `worker` until the backlog is empty; then marks
    /// the worker idle. Popping and going idle happen under one lock, so a job queued
    /// concurrently is either taken here or finds the worker idle: never stranded.
    private func run(_ job: @escaping @Sendable () -> Void, on worker: Int) {
        var next: (@Sendable () -> Void)? = job
        while let current = next {
            current()
            next = state.withLock { state in
                if let queued = state.popBacklog() { return queued }
                state.idleWorkers.append(worker)
                return nil
            }
        }
    }
}
