import Dispatch
import Glibc
import HearthJSON
import HearthSQLite
import HearthStore
import HearthTesting
import Synchronization
import Testing

/// Reads go to an idle reader: a long read holds its own reader only.
@Suite struct ReaderPoolTests {
    final class Member: QueueConfined {
        let queue: DispatchQueue
        let index: Int
        init(_ index: Int) {
            self.index = index
            queue = DispatchQueue(label: "test.reader.\(index)")
        }
    }

    /// How long a test waits for work that should finish at once before it fails (not a
    /// pause: the wait ends as soon as the work is done).
    static var patience: DispatchTime { .now() + 30 }

    /// Starts a long read on one of `pool`'s readers; it ends when the returned gate opens.
    func hold(_ pool: ReaderPool<Member>) -> DispatchSemaphore {
        let gate = DispatchSemaphore(value: 0)
        let held = DispatchSemaphore(value: 0)
        pool.async { _ in
            held.signal()
            gate.wait()
        }
        held.wait()
        return gate
    }

    @Test func smallReadsGoToTheIdleReaderWhileTheOtherIsBusy() {
        let pool = ReaderPool([Member(0), Member(1)])
        let gate = hold(pool)
        let ranOn = Mutex<[Int]>([])
        let group = DispatchGroup()
        for _ in 0..<10 {
            group.enter()
            pool.async { member in
                ranOn.withLock { $0.append(member.index) }
                group.leave()
            }
        }
        #expect(group.wait(timeout: Self.patience) == .success, "every small read finished while the long one held its reader")
        let busy = ranOn.withLock { $0 }
        #expect(busy.count == 10 && Set(busy).count == 1, "all on the one idle reader: \(busy)")
        gate.signal()
    }

    @Test func readsWaitInTheOrderTheyCameWhileEveryReaderIsBusy() {
        let pool = ReaderPool([Member(0)])
        let gate = hold(pool)
        let order = Mutex<[Int]>([])
        let group = DispatchGroup()
        for i in 0..<100 {
            group.enter()
            pool.async { _ in
                order.withLock { $0.append(i) }
                group.leave()
            }
        }
        #expect(pool.waitingCount == 100)
        gate.signal()
        #expect(group.wait(timeout: Self.patience) == .success)
        #expect(order.withLock { $0 } == Array(0..<100))
        #expect(pool.waitingCount == 0)
    }

    @Test func syncWaitsItsTurnAndReturnsTheResult() {
        let pool = ReaderPool([Member(0)])
        let gate = hold(pool)
        let order = Mutex<[String]>([])
        let group = DispatchGroup()
        group.enter()
        DispatchQueue.global().async {
            let value = pool.sync { member in
                order.withLock { $0.append("sync") }
                return member.index + 41
            }
            order.withLock { $0.append("returned \(value)") }
            group.leave()
        }
        // The caller is queued behind the long read before the next read comes.
        while pool.waitingCount < 1 { sched_yield() }
        group.enter()
        pool.async { _ in
            order.withLock { $0.append("async") }
            group.leave()
        }
        gate.signal()
        #expect(group.wait(timeout: Self.patience) == .success)
        let seen = order.withLock { $0 }
        #expect(seen.first == "sync" && seen.contains("returned 41") && seen.contains("async"), "\(seen)")
    }

    @Test func aLongReadOfTheStoreHoldsOneReaderOnly() throws {
        let dir = TemporaryDirectory(prefix: "hearth-readers")
        let store = try SQLiteTreeStore(directory: dir.path)
        let location = try DataPath(string: "a")
        try store.writeSync(.set(WriteEntry(path: location, value: .int(1))))
        let gate = DispatchSemaphore(value: 0)
        let held = DispatchSemaphore(value: 0)
        store.read({ _ in
            held.signal()
            gate.wait()
        }, completion: { _ in })
        held.wait()
        let values = Mutex<[JSONValue]>([])
        let group = DispatchGroup()
        for _ in 0..<6 {
            group.enter()
            store.read({ view in try view.value(at: location) }, completion: { result in
                if case .success(let value) = result { values.withLock { $0.append(value) } }
                group.leave()
            })
        }
        #expect(group.wait(timeout: Self.patience) == .success, "the reads went to the idle reader")
        #expect(values.withLock { $0 } == Array(repeating: .int(1), count: 6))
        #expect(try store.readSync { try $0.value(at: location) } == .int(1))
        gate.signal()
    }
}
