import Dispatch
import Synchronization

/// A member of a `ReaderPool`: a connection confined to its own serial queue.
package protocol QueueConfined: AnyObject, Sendable {
    var queue: DispatchQueue { get }
}

/// Lends an engine's reader connections to reads: the next read goes to a reader that is
/// idle, and waits only while every reader is busy, in the order reads came.
///
/// Handing reads out in turn instead (each reader's queue taking every n-th read) put a
/// small read behind a long one on its reader while another reader sat idle: with a
/// location of 64,000 children queried in memory, a one-leaf GET waited up to 1.3 s.
package final class ReaderPool<Member: QueueConfined>: Sendable {
    package typealias Work = @Sendable (Member) -> Void

    /// A caller of `sync` waiting for a reader: the one handed over, and its wake-up.
    private final class Handoff: Sendable {
        let semaphore = DispatchSemaphore(value: 0)
        let member = Mutex<Int?>(nil)
    }

    private enum Waiter: Sendable {
        case work(Work)
        case caller(Handoff)
    }

    private struct State: Sendable {
        var idle: [Int]
        /// Waiters in arrival order from `head` on (the prefix is spent; compacted).
        var waiting: [Waiter] = []
        var head = 0
    }

    package let members: [Member]
    private let state: Mutex<State>

    package init(_ members: [Member]) {
        precondition(!members.isEmpty, "a pool needs a member")
        self.members = members
        state = Mutex(State(idle: Array(members.indices.reversed())))
    }

    /// Runs `work` on an idle reader's queue, or on the first reader to become idle.
    package func async(_ work: @escaping Work) {
        let index: Int? = state.withLock { state in
            if let index = state.idle.popLast() { return index }
            state.waiting.append(.work(work))
            return nil
        }
        if let index { run(work, on: index) }
    }

    /// Runs `body` on an idle reader's queue and returns its result, blocking the caller
    /// until a reader is idle and `body` ran.
    package func sync<T>(_ body: (Member) throws -> T) rethrows -> T {
        let index = acquire()
        defer { release(index) }
        let member = members[index]
        return try member.queue.sync { try body(member) }
    }

    /// How many reads wait for a reader (tests).
    package var waitingCount: Int { state.withLock { $0.waiting.count - $0.head } }

    private func run(_ work: @escaping Work, on index: Int) {
        let member = members[index]
        member.queue.async {
            work(member)
            self.release(index)
        }
    }

    private func acquire() -> Int {
        let handoff = Handoff()
        let index: Int? = state.withLock { state in
            if let index = state.idle.popLast() { return index }
            state.waiting.append(.caller(handoff))
            return nil
        }
        if let index { return index }
        handoff.semaphore.wait()
        return handoff.member.withLock { $0! }
    }

    /// Gives reader `index` to the first waiter, or back to the idle ones.
    private func release(_ index: Int) {
        let next: Waiter? = state.withLock { state in
            guard state.head < state.waiting.count else {
                state.idle.append(index)
                return nil
            }
            let waiter = state.waiting[state.head]
            state.head += 1
            if state.head == state.waiting.count {
                state.waiting.removeAll(keepingCapacity: true)
                state.head = 0
            } else if state.head >= 64 && state.head * 2 >= state.waiting.count {
                state.waiting.removeFirst(state.head)
                state.head = 0
            }
            return waiter
        }
        switch next {
        case .work(let work)?:
            run(work, on: index)
        case .caller(let handoff)?:
            handoff.member.withLock { $0 = index }
            handoff.semaphore.signal()
        case nil:
            break
        }
    }
}
