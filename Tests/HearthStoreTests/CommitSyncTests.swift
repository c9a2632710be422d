import Dispatch
import Foundation
import HearthJSON
import HearthSystem
import Synchronization
import Testing
@testable import HearthSQLite
@testable import HearthStore

/// With `synchronous=full` a batch's WAL sync runs off the writer's thread
/// (`CommitSyncer`): no writer is answered before its batch is synced, batches that commit
/// meanwhile share the next sync, and a failed sync refuses every write after it.
@Suite struct CommitSyncTests {
    let dir = TemporaryDirectory()
    /// How long a test waits for something that must happen before it fails (never a
    /// sleep: every wait ends as soon as what it waits for happens).
    static let patience = DispatchTimeInterval.seconds(30)

    /// A sync the test holds until it lets it go, and counts.
    final class HeldSync: Sendable {
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let holding = Atomic<Bool>(true)
        let calls = Atomic<Int>(0)
        /// The device and inode of each descriptor synced.
        let files = Mutex<[[UInt64]]>([])

        var sync: @Sendable (Int32) throws(SystemError) -> Void {
            { fd throws(SystemError) in
                self.calls.add(1, ordering: .relaxed)
                let (device, inode) = try Syscall.identity(fd)
                self.files.withLock { $0.append([device, inode]) }
                if self.holding.load(ordering: .acquiring) {
                    self.entered.signal()
                    self.release.wait()
                }
                try Syscall.syncData(fd)
            }
        }

        /// Lets the held sync go, and every later one through.
        func letGo() {
            holding.store(false, ordering: .releasing)
            release.signal()
        }
    }

    /// One write's answer, waited for.
    final class Answer: Sendable {
        let done = DispatchSemaphore(value: 0)
        let result = Mutex<Result<WriteOutcome, WriteFailure>?>(nil)
        var completion: @Sendable (Result<WriteOutcome, WriteFailure>) -> Void {
            { result in
                self.result.withLock { $0 = result }
                self.done.signal()
            }
        }
        var answered: Bool { result.withLock { $0 != nil } }
        func wait() -> Result<WriteOutcome, WriteFailure>? {
            guard done.wait(timeout: .now() + CommitSyncTests.patience) == .success else { return nil }
            return result.withLock { $0 }
        }
    }

    func open(_ synchronous: StoreOptions.Synchronous = .full, sync: @escaping @Sendable (Int32) throws(SystemError) -> Void,
              observeStorage: @escaping @Sendable (StorageEvent) -> Void = { _ in },
              observeSync: (@Sendable (UInt64) -> Void)? = nil,
              observeWrite: (@Sendable (UInt64, UInt64) -> Void)? = nil,
              onCommit: @escaping @Sendable ([Change], any TreeView) -> Void = { _, _ in },
              onDurable: @escaping @Sendable ([Change]) -> Void = { _ in }) throws -> SQLiteTreeStore {
        var options = StoreOptions()
        options.synchronous = synchronous
        return try SQLiteTreeStore(directory: dir.path, options: options, observeSync: observeSync, observeWrite: observeWrite,
                                   observeStorage: observeStorage, syncData: sync,
                                   onCommit: onCommit, onDurable: onDurable)
    }

    static func set(_ p: String, _ value: JSONValue) -> WriteOperation {
        .set(WriteEntry(path: path(p), value: value))
    }

    @Test func aWriteIsVisibleAtItsCommitAndAnsweredOnlyOnceItsBatchIsSynced() throws {
        let held = HeldSync()
        let heard = Mutex<[String]>([])
        let store = try open(sync: held.sync, onCommit: { changes, _ in
            heard.withLock { $0 += changes.map { $0.path.storageKey } }
        })
        let answer = Answer()
        store.write(Self.set("a", .int(1)), completion: answer.completion)
        #expect(held.entered.wait(timeout: .now() + Self.patience) == .success)
        // Committed: readers and listeners have it while its sync is held.
        #expect(try store.get("a") == .int(1))
        #expect(heard.withLock { $0 } == ["a"])
        #expect(!answer.answered)
        held.letGo()
        let result = try #require(answer.wait())
        #expect((try? result.get()) != nil)
        let calls = held.calls.load(ordering: .relaxed)
        #expect(calls == 1)
        store.close()
    }

    /// What acts outside Hearth on a write (a trigger's delivery) sees it only once it is on
    /// disk: `onDurable` and the outbox's pending events wait for the sync.
    @Test func triggersHearOfABatchAndSeeItsEventsOnlyOnceItIsSynced() throws {
        let held = HeldSync()
        let durable = Mutex<[Int64]>([])
        let store = try open(sync: held.sync, onDurable: { changes in durable.withLock { $0 += changes.map(\.seq) } })
        let answer = Answer()
        let event = OutboxEvent(trigger: "t", payload: Array("{}".utf8))
        store.write(Self.set("a", .int(1)), effects: { _, _ in [event] }, completion: answer.completion)
        #expect(held.entered.wait(timeout: .now() + Self.patience) == .success)
        #expect(try store.get("a") == .int(1))
        #expect(durable.withLock { $0 }.isEmpty)
        #expect(try store.triggerOutbox.pending(trigger: "t", after: 0, limit: 10).isEmpty)
        held.letGo()
        let outcome = try #require(try answer.wait()?.get())
        #expect(durable.withLock { $0 } == [outcome.seq])
        let pending = try store.triggerOutbox.pending(trigger: "t", after: 0, limit: 10)
        #expect(pending.map(\.seq) == [outcome.seq])
        store.close()
        // Reopened, everything in the file is on disk: its events are handed out at once.
        let reopened = try open(sync: held.sync)
        #expect(try reopened.triggerOutbox.pending(trigger: "t", after: 0, limit: 10).map(\.seq) == [outcome.seq])
        reopened.close()
    }

    @Test func theSyncIsOfTheStoresOwnWALFile() throws {
        let held = HeldSync()
        held.holding.store(false, ordering: .relaxed)
        let store = try open(sync: held.sync)
        try store.put("a", .int(1))
        // The file synced is the one named <database>-wal, and the one SQLite has open.
        let opened = try Syscall.openForSync(store.databasePath + "-wal")
        defer { try? Syscall.close(opened) }
        let (device, inode) = try Syscall.identity(opened)
        #expect(held.files.withLock { $0 } == [[device, inode]])
        let file = try #require(try store.onWriter { WALWriteCoalescing.syncFile(of: $0) })
        #expect(file.path == store.databasePath + "-wal")
        store.close()
    }

    @Test func batchesCommittedDuringASyncShareTheNextAndAreAnsweredInOrder() throws {
        let held = HeldSync()
        let timed = Mutex<[UInt64]>([])
        let store = try open(sync: held.sync, observeSync: { nanoseconds in timed.withLock { $0.append(nanoseconds) } })
        let order = Mutex<[Int]>([])
        let first = Answer()
        store.write(Self.set("w/0", .int(0))) { result in
            order.withLock { $0.append(0) }
            first.completion(result)
        }
        #expect(held.entered.wait(timeout: .now() + Self.patience) == .success)
        var later: [Answer] = []
        for index in 1...20 {
            let answer = Answer()
            later.append(answer)
            store.write(Self.set("w/\(index)", .int(Int64(index)))) { result in
                order.withLock { $0.append(index) }
                answer.completion(result)
            }
        }
        // Every later write committed (a reader sees it) and its batch was handed on
        // (the writer's queue is idle), while the first sync is still held.
        store.writerQueue.sync {}
        for index in 1...20 { #expect(try store.get("w/\(index)") == .int(Int64(index))) }
        #expect(later.allSatisfy { !$0.answered } && !first.answered)
        held.letGo()
        for answer in [first] + later { #expect((try? answer.wait()?.get()) != nil) }
        #expect(order.withLock { $0 } == Array(0...20))
        // One sync for the first batch, one for all that committed while it ran.
        let calls = held.calls.load(ordering: .relaxed)
        #expect(calls == 2)
        #expect(store.syncer.syncs == 2)
        // Each sync's time is reported (`hearth_wal_sync_seconds`); the first was held.
        #expect(timed.withLock { $0 }.count == 2)
        store.close()
    }

    /// Each write is observed once, as it is answered (after its sync), with how long it
    /// waited for its batch and took in all. A write queued while the writer is held
    /// waited at least from when `write` returned until the hold ended.
    @Test func eachWriteIsObservedWithItsWaitWhenItIsAnswered() throws {
        let held = HeldSync()
        let observed = Mutex<[(waited: UInt64, answered: UInt64)]>([])
        let store = try open(sync: held.sync, observeWrite: { waited, answered in observed.withLock { $0.append((waited, answered)) } })
        let busy = DispatchSemaphore(value: 0), holding = DispatchSemaphore(value: 0)
        store.writerQueue.async {
            holding.signal()
            busy.wait()
        }
        holding.wait()
        let answer = Answer()
        store.write(Self.set("a", .int(1)), completion: answer.completion)
        let queued = DispatchTime.now().uptimeNanoseconds  // after it joined the queue
        #expect(try store.get("a") == .null)  // a read meanwhile: the write waits behind the hold
        let released = DispatchTime.now().uptimeNanoseconds
        busy.signal()
        #expect(held.entered.wait(timeout: .now() + Self.patience) == .success)
        #expect(observed.withLock { $0 }.isEmpty)  // committed, not yet synced: not answered
        held.letGo()
        #expect((try? answer.wait()?.get()) != nil)
        let seen = observed.withLock { $0 }
        try #require(seen.count == 1)
        #expect(seen[0].waited >= released - queued)
        #expect(seen[0].answered >= seen[0].waited)
        try store.put("b", .int(2))
        #expect(observed.withLock { $0 }.count == 2)
        store.close()
    }

    @Test func aFailedSyncRefusesItsWritesAndEveryLaterOneUntilRestart() throws {
        let events = Mutex<[StorageEvent]>([])
        let failing: @Sendable (Int32) throws(SystemError) -> Void = { _ throws(SystemError) in
            throw SystemError(errno: EIO, call: "fdatasync")
        }
        let store = try open(sync: failing, observeStorage: { event in events.withLock { $0.append(event) } })
        // The write committed but may not be on disk: its outcome is unknown.
        do {
            try store.put("a", .int(1))
            Issue.record("a write whose sync failed was acknowledged")
        } catch let failure as WriteFailure {
            guard case .outcomeUnknown(let error) = failure else {
                Issue.record("expected outcomeUnknown, got \(failure)")
                return
            }
            #expect(error.sqliteCode == CommitSyncer.ioErrFsync)
        }
        #expect(events.withLock { $0 } == [.syncFailed(file: store.databasePath + "-wal", errno: EIO)])
        // Every later write is refused before it is written.
        do {
            try store.put("b", .int(2))
            Issue.record("a write after a failed sync was taken")
        } catch let failure as WriteFailure {
            guard case .store(let error) = failure else {
                Issue.record("expected a refusal, got \(failure)")
                return
            }
            #expect(error.sqliteCode == CommitSyncer.ioErrFsync)
        }
        #expect(try store.get("b") == .null)
        // Readiness says so, and the failure is reported once.
        let ready = Answer.Readiness()
        store.checkWritable(completion: ready.completion)
        #expect(ready.wait() == false)
        #expect(events.withLock { $0 }.count == 1)
        store.close()
    }

    @Test func closeWaitsForTheLastSyncAndItsAnswers() throws {
        let held = HeldSync()
        let store = try open(sync: held.sync)
        let answer = Answer()
        store.write(Self.set("a", .int(1)), completion: answer.completion)
        #expect(held.entered.wait(timeout: .now() + Self.patience) == .success)
        let closed = DispatchSemaphore(value: 0)
        let answeredBeforeClose = Atomic<Bool>(false)
        DispatchQueue.global().async {
            store.close()
            answeredBeforeClose.store(answer.answered, ordering: .releasing)
            closed.signal()
        }
        #expect(!answer.answered)
        held.letGo()
        #expect(closed.wait(timeout: .now() + Self.patience) == .success)
        let answered = answeredBeforeClose.load(ordering: .acquiring)
        #expect(answered)
    }

    @Test func withSynchronousNormalNoSyncIsOwed() throws {
        let held = HeldSync()
        let store = try open(.normal, sync: held.sync)
        try store.put("a", .int(1))
        let calls = held.calls.load(ordering: .relaxed)
        #expect(calls == 0)
        #expect(try store.onWriter { WALWriteCoalescing.syncFile(of: $0) } == nil)
        store.close()
    }

    /// The WAL level: a commit's sync is skipped inside `commitDeferringSync` and owed to
    /// the caller; the sync of a new WAL header is SQLite's own, as is every sync outside.
    @Test func onlyTheCommitsSyncIsDeferredNeverANewHeaders() throws {
        let database = dir.path + "/wal.sqlite"
        let connection = try SQLiteConnection(path: database, mode: .readWriteCreate, coalescingWALWrites: true)
        try connection.execute("PRAGMA journal_mode = WAL")
        try connection.execute("PRAGMA synchronous = FULL")
        try connection.execute("CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)")
        func commitRow(_ key: Int) throws -> WALSyncFile? {
            try connection.execute("BEGIN IMMEDIATE")
            try connection.execute("INSERT INTO t VALUES (\(key), 'x')")
            return try WALWriteCoalescing.commitDeferringSync(on: connection) { () throws(StoreError) in
                try connection.execute("COMMIT")
            }
        }
        let made = try #require(WALWriteCoalescing.syncsMade(by: connection))
        // The WAL holds frames: a commit appends, and only its own sync is skipped.
        #expect(try commitRow(1) != nil)
        #expect(WALWriteCoalescing.syncsMade(by: connection) == made)
        // A commit outside the call syncs as SQLite says.
        try connection.execute("INSERT INTO t VALUES (2, 'x')")
        #expect(WALWriteCoalescing.syncsMade(by: connection) == made + 1)
        // The WAL starts over: the next commit writes a new header, which is synced by
        // itself before the frames; the commit's own sync is still skipped.
        try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        let afterCheckpoint = try #require(WALWriteCoalescing.syncsMade(by: connection))
        #expect(try commitRow(3) != nil)
        #expect(WALWriteCoalescing.syncsMade(by: connection) == afterCheckpoint + 1)
        // A transaction that writes nothing owes nothing.
        try connection.execute("BEGIN IMMEDIATE")
        let nothing = try WALWriteCoalescing.commitDeferringSync(on: connection) { () throws(StoreError) in
            try connection.execute("COMMIT")
        }
        #expect(nothing == nil)
        #expect(try connection.scalarInt("SELECT count(*) FROM t") == 3)
    }
}

extension CommitSyncTests.Answer {
    /// A readiness answer, waited for: true when the store takes writes.
    final class Readiness: Sendable {
        let done = DispatchSemaphore(value: 0)
        let ready = Mutex<Bool?>(nil)
        var completion: @Sendable (Result<Void, any Error>) -> Void {
            { result in
                self.ready.withLock { $0 = (try? result.get()) != nil }
                self.done.signal()
            }
        }
        func wait() -> Bool? {
            guard done.wait(timeout: .now() + CommitSyncTests.patience) == .success else { return nil }
            return ready.withLock { $0 }
        }
    }
}
