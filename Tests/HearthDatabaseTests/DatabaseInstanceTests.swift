import Dispatch
import HearthJSON
import HearthRules
import HearthSQLite
import HearthStore
import HearthStreams
import HearthTesting
import Logging
import Synchronization
import Testing
@testable import HearthDatabase

/// One database assembled by `DatabaseInstance` over a real SQLite store: commit observers
/// see every commit after the listens, `replaceRules` swaps, records and reviews, and
/// `close` stops what it started.
@Suite struct DatabaseInstanceTests {
    static let open = #"{"rules": {".read": true, ".write": true}}"#
    static let closed = #"{"rules": {".read": false, ".write": false}}"#
    let directory = TemporaryDirectory()

    func instance(rules: String = Self.open) throws -> DatabaseInstance {
        let path = directory.path
        return try DatabaseInstance(
            rules: try RuleSet.compile(rules), rulesText: rules, hub: StreamHub(clock: SQLiteTreeStore.systemMilliseconds),
            readCacheBytes: ReadCache.defaultMaxBytes, logger: Logger(label: "test"),
            open: { hooks in try SQLiteTreeStore(directory: path, hooks: hooks) },
            registrantStands: { _ in { _ in true } })
    }

    static func set(_ path: String, _ value: JSONValue) -> WriteOperation {
        .set(WriteEntry(path: try! DataPath(string: path), value: value))
    }

    static func write(_ operation: WriteOperation, to database: Database) async -> Result<WriteOutcome, DatabaseError> {
        await withCheckedContinuation { continuation in
            database.write(operation, as: .unauthenticated) { continuation.resume(returning: $0) }
        }
    }

    /// Records the paths of every commit it is told of.
    final class Recorder: CommitObserver {
        let seen = Mutex<[String]>([])
        func committed(_ changes: [Change]) { seen.withLock { $0 += changes.map(\.path.description) } }
    }

    @Test func commitObserversSeeEveryCommitUntilRemoved() async throws {
        let instance = try instance()
        defer { instance.close() }
        let (first, second) = (Recorder(), Recorder())
        instance.addCommitObserver(first)
        instance.addCommitObserver(second)
        #expect(instance.commitObserverCount == 2)
        _ = try await Self.write(Self.set("/a", .int(1)), to: instance.database).get()
        // Told before the writer is acknowledged: no waiting needed.
        #expect(first.seen.withLock { $0 } == ["/a"])
        #expect(second.seen.withLock { $0 } == ["/a"])
        instance.removeCommitObserver(first)
        _ = try await Self.write(Self.set("/b", .int(2)), to: instance.database).get()
        #expect(first.seen.withLock { $0 } == ["/a"])
        #expect(second.seen.withLock { $0 } == ["/a", "/b"])
    }

    /// A listen's endings, waited for with a safety timeout.
    final class Endings: StreamEventSink {
        let stream: AsyncStream<StreamVerdict>
        let continuation: AsyncStream<StreamVerdict>.Continuation
        init() { (stream, continuation) = AsyncStream.makeStream() }
        func deliver(_ event: StreamEvent, seq: Int64) {}
        func ended(_ verdict: StreamVerdict) { continuation.yield(verdict) }
        func keepAlive() {}

        func next(within seconds: Int = 30) async -> StreamVerdict? {
            await withTaskGroup(of: StreamVerdict?.self) { group in
                group.addTask { [stream] in await stream.first { _ in true } }
                group.addTask { try? await Task.sleep(for: .seconds(seconds)); return nil }
                let first = await group.next() ?? nil
                group.cancelAll()
                continuation.finish()
                return first
            }
        }
    }

    @Test func replaceRulesSwapsRecordsAndEndsAListenTheNewRulesDeny() async throws {
        let instance = try instance()
        defer { instance.close() }
        let sink = Endings()
        let listening: Result<Listening, DatabaseError> = await withCheckedContinuation { continuation in
            instance.database.listen(try! DataPath(string: "/x"), query: nil, as: .unauthenticated,
                                     gate: SubscriberGate(caller: .unauthenticated, uid: nil, issuedAt: nil, expiresAt: nil),
                                     address: "127.0.0.1", hub: instance.listens.hub, sink: sink) { continuation.resume(returning: $0) }
        }
        _ = try listening.get()
        #expect(instance.listens.hub.openStreams == 1)
        instance.replaceRules(try RuleSet.compile(Self.closed), text: Self.closed, by: .adminToken)
        #expect(await sink.next() == .cancel)
        // Swapped: a write the old rules allowed is refused now.
        guard case .failure(.permissionDenied) = await Self.write(Self.set("/y", .int(1)), to: instance.database) else {
            Issue.record("the new rules did not run"); return
        }
        // Recorded, newest first, with its author.
        let versions = try instance.history.versions()
        #expect(versions.map(\.text) == [Self.closed, Self.open])
        #expect(versions.first?.savedBy == RulesHistory.Author.adminToken.description)
    }

    @Test func closeStopsHousekeepingAndTheStore() async throws {
        let instance = try instance()
        instance.startHousekeeping(DatabaseInstance.Housekeeping(
            revocationCheckEvery: 3600, queue: DispatchQueue(label: "test"), isStillValid: { _, _ in true },
            changeLogTrimEvery: 3600, orphanCheckEvery: 3600))
        #expect(instance.runningTimers == 1)  // the change-log trim; orphans only on a shared engine
        instance.close()
        #expect(instance.runningTimers == 0)
        guard case .failure = await Self.write(Self.set("/a", .int(1)), to: instance.database) else {
            Issue.record("a closed instance took a write"); return
        }
    }

    /// A registrant check that throws closes the store it was given: nothing stays open.
    @Test func aFailedOpenClosesTheStore() throws {
        struct Refused: Error {}
        let path = directory.path
        let opened = Mutex<(any StorageEngine)?>(nil)
        #expect(throws: Refused.self) {
            _ = try DatabaseInstance(
                rules: try RuleSet.compile(Self.open), rulesText: Self.open, hub: StreamHub(clock: SQLiteTreeStore.systemMilliseconds),
                readCacheBytes: 0, logger: Logger(label: "test"),
                open: { hooks in
                    let store = try SQLiteTreeStore(directory: path, hooks: hooks)
                    opened.withLock { $0 = store }
                    return store
                },
                registrantStands: { _ in throw Refused() })
        }
        let store = try #require(opened.withLock { $0 })
        #expect(throws: (any Error).self) { try store.readSync { try $0.exists(at: .root) } }
    }
}
