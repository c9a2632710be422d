import HearthJSON
import Synchronization
import Testing
@testable import HearthStore

/// The writer's queue tells of each write it took, as the write is answered: how long it
/// waited for its batch to start and how long it took in all, on the queue's clock.
@Suite struct PendingWritesObserveTests {
    /// A clock the test sets.
    final class Clock: Sendable {
        let value = Mutex<UInt64>(0)
        func set(_ nanoseconds: UInt64) { value.withLock { $0 = nanoseconds } }
        var now: @Sendable () -> UInt64 { { self.value.withLock { $0 } } }
    }

    static func set(_ key: String) -> WriteOperation {
        .set(WriteEntry(path: path(key), value: .int(1)))
    }

    @Test func eachAnswerTellsItsWaitAndItsWholeTime() {
        let clock = Clock()
        let observed = Mutex<[[UInt64]]>([])
        let pending = PendingWrites(options: StoreOptions(), observe: { waited, answered in
            observed.withLock { $0.append([waited, answered]) }
        }, now: clock.now)
        let answered = Mutex<[String]>([])
        var drains = 0
        for (key, at) in [("a", UInt64(100)), ("b", 130)] {
            clock.set(at)
            pending.add(Self.set(key), check: nil, completion: { _ in
                // The observation comes first: a client that has its answer finds it counted.
                answered.withLock { $0.append("\(key) after \(observed.withLock { $0.count }) observed") }
            }, drain: { drains += 1 })
        }
        #expect(drains == 1)  // the first write into an idle queue starts the writer
        var batches = 0
        pending.drain { batch in
            batches += 1
            #expect(batch.count == 2)
            clock.set(900)  // the batch committed, and was synced
            batch[0].completion(.failure(.store(.closed)))
            clock.set(950)
            batch[1].completion(.failure(.store(.closed)))
        }
        #expect(batches == 1)
        // The batch's start was read once, when the queue handed it over: at 130.
        #expect(observed.withLock { $0 } == [[30, 800], [0, 820]])
        #expect(answered.withLock { $0 } == ["a after 1 observed", "b after 2 observed"])
    }

    @Test func withoutAnObserverAnswersAreUntouched() {
        let pending = PendingWrites(options: StoreOptions())
        let answers = Mutex(0)
        pending.add(Self.set("a"), check: nil, completion: { _ in answers.withLock { $0 += 1 } }, drain: {})
        pending.drain { batch in for write in batch { write.completion(.failure(.store(.closed))) } }
        #expect(answers.withLock { $0 } == 1)
    }
}
