import Dispatch
import HearthJSON
import Synchronization

/// The writes waiting for an engine's single writer, and the group commit's batching
/// (docs/design.md §3), shared by the engines: a write is refused at once when too large or
/// after `close`; otherwise it joins the queue, and the first write into an idle queue
/// starts a drain on the writer's queue, which commits batches until the queue is empty.
package final class PendingWrites: Sendable {
    package struct Write: Sendable {
        package var operation: WriteOperation
        package var check: WriteCheck?
        package var effects: WriteEffects?
        package var completion: @Sendable (Result<WriteOutcome, WriteFailure>) -> Void
        /// When it joined the queue (`DispatchTime`'s nanoseconds), for `observe`.
        var queuedAt: UInt64 = 0
    }

    /// Told of each write the writer took, when it is answered: how long it waited in the
    /// queue for its batch to start, and how long from joining the queue to its answer
    /// (its wait, its batch's commit and, where the engine syncs after the commit, that
    /// sync), in nanoseconds.
    package typealias Observe = @Sendable (_ waited: UInt64, _ answered: UInt64) -> Void

    private struct State {
        var pending: [Write] = []
        var draining = false
        var closed = false
    }
    private let state = Mutex(State())
    private let maxNodesPerWrite: Int
    private let maxBatchSize: Int
    private let observe: Observe?
    /// A monotonic clock in nanoseconds (`DispatchTime`'s; tests inject their own).
    private let now: @Sendable () -> UInt64

    package init(options: StoreOptions, observe: Observe? = nil,
                 now: @escaping @Sendable () -> UInt64 = { DispatchTime.now().uptimeNanoseconds }) {
        maxNodesPerWrite = options.maxNodesPerWrite
        maxBatchSize = options.maxBatchSize
        self.observe = observe
        self.now = now
    }

    /// Queues a write; `drain` is called (once per idle period) to start the writer.
    package func add(_ operation: WriteOperation, check: WriteCheck?, effects: WriteEffects? = nil,
                     completion: @escaping @Sendable (Result<WriteOutcome, WriteFailure>) -> Void,
                     drain: () -> Void) {
        // Refused before it reaches the writer, at no more cost than the limit.
        if WriteSize.rows(in: operation, limit: maxNodesPerWrite) > maxNodesPerWrite {
            completion(.failure(.tooLarge(.writes(limit: maxNodesPerWrite))))
            return
        }
        let queuedAt = observe == nil ? 0 : now()  // read before the lock, not under it
        let startDrain: Bool? = state.withLock { state in
            if state.closed { return nil }
            state.pending.append(Write(operation: operation, check: check, effects: effects, completion: completion,
                                       queuedAt: queuedAt))
            if state.draining { return false }
            state.draining = true
            return true
        }
        switch startDrain {
        case nil: completion(.failure(.store(.closed)))
        case true?: drain()
        case false?: break
        }
    }

    /// Commits queued writes in batches of at most `maxBatchSize` until none are left
    /// (call on the writer's queue).
    package func drain(_ commit: ([Write]) -> Void) {
        while true {
            let batch: [Write] = state.withLock { state in
                let n = min(state.pending.count, maxBatchSize)
                let batch = Array(state.pending.prefix(n))
                state.pending.removeFirst(n)
                if batch.isEmpty { state.draining = false }
                return batch
            }
            if batch.isEmpty { return }
            commit(observe.map { observing(batch, $0) } ?? batch)
        }
    }

    /// `batch` with each answer telling `observe` first how long the write waited and how
    /// long it took in all.
    private func observing(_ batch: [Write], _ observe: @escaping Observe) -> [Write] {
        let now = self.now
        let started = now()
        return batch.map { write in
            var write = write
            let (queuedAt, answer) = (write.queuedAt, write.completion)
            write.completion = { result in
                observe(started &- queuedAt, now() &- queuedAt)
                answer(result)
            }
            return write
        }
    }

    /// Later writes fail with `.closed`; true when it was open.
    @discardableResult
    package func close() -> Bool {
        state.withLock { state in
            defer { state.closed = true }
            return !state.closed
        }
    }

    package var isClosed: Bool { state.withLock { $0.closed } }

    /// `write` and a wait for its outcome (tools, tests, the CLI; never on the writer's queue).
    package static func waitFor(_ write: (@escaping @Sendable (Result<WriteOutcome, WriteFailure>) -> Void) -> Void) throws(WriteFailure) -> WriteOutcome {
        let box = Mutex<Result<WriteOutcome, WriteFailure>?>(nil)
        let done = DispatchSemaphore(value: 0)
        write { result in
            box.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        return try box.withLock { $0! }.get()
    }
}

extension PendingWrites.Write {
    /// The write as it will be applied, judged inside the writer's transaction on `view`
    /// (the state before it): server values resolved at `time`, then its check. Throws the
    /// `WriteFailure` that refuses it (a value its server values cannot leave, such as an
    /// increment past the largest double, rejects it).
    package func checked(on view: any TreeView, at time: Int64) throws -> WriteOperation {
        let resolved = operation.hasServerValues
            ? try Self.judging { try operation.resolvingServerValues(in: view, now: time) } : operation
        if let check { try Self.judging { try check(view, resolved) } }
        return resolved
    }

    /// The events of the write (`WriteEffects`), computed on `view` (the state before it)
    /// for `applied` (as `checked` returned it); none without effects. Throws the
    /// `WriteFailure` that refuses the write.
    package func events(on view: any TreeView, applied: WriteOperation) throws -> [OutboxEvent] {
        guard let effects else { return [] }
        return try Self.judging { try effects(view, applied) }
    }

    /// `body`'s result; a store error it throws fails the write, any other rejects it.
    private static func judging<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as StoreError {
            throw WriteFailure.store(error)
        } catch {
            throw WriteFailure.rejected(error)
        }
    }
}

/// The watched locations below a write (`EngineHooks.watch`) whose value it leaves as it
/// was: read before the write is applied, compared after, so their streams get no event.
package struct WatchedValues {
    private let paths: [DataPath]
    private let before: [JSONValue]

    package init(below operation: WriteOperation, watch: (@Sendable (DataPath) -> [DataPath]?)?, view: any TreeView) throws(StoreError) {
        let base: DataPath
        switch operation {
        case .set(let entry): base = entry.path
        case .update(let path, _): base = path
        }
        paths = watch?(base) ?? []
        var values: [JSONValue] = []
        for path in paths { values.append(try view.value(at: path)) }
        before = values
    }

    /// Whether no location below the write is watched (nothing to compare after it).
    package var isEmpty: Bool { paths.isEmpty }

    /// The watched locations whose value is the same on `view` now.
    package func unchanged(on view: any TreeView) throws(StoreError) -> [DataPath] {
        var same: [DataPath] = []
        for (path, old) in zip(paths, before) where try view.value(at: path) == old { same.append(path) }
        return same
    }
}
