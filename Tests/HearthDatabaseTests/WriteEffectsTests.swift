import HearthJSON
import HearthRules
import HearthSQLite
import HearthStore
import HearthTesting
import Synchronization
import Testing
@testable import HearthDatabase

/// The core's effects hook: asked for every write, admins' and onDisconnect
/// operations' included, run in the write's transaction on the view before it with the
/// operation as applied; one that throws refuses the write.
@Suite struct WriteEffectsTests {
    final class Seen: Sendable {
        let calls = Mutex<[(caller: Caller, before: JSONValue, applied: WriteOperation)]>([])
    }

    static func path(_ text: String) -> DataPath { try! DataPath(string: text) }

    static func database(_ store: SQLiteTreeStore, seen: Seen, refuse: Bool = false) throws -> Database {
        Database(store: store, policy: RulesAccessPolicy(rules: try RuleSet.compile(#"{"rules": {".read": true, ".write": true}}"#)),
                 effects: { caller in
                     { view, applied in
                         let before = try view.value(at: applied.entries[0].path)
                         seen.calls.withLock { $0.append((caller, before, applied)) }
                         if refuse { throw DatabaseError.tooManyTriggerEvents(limit: 1) }
                         return []
                     }
                 })
    }

    static func write(_ database: Database, _ operation: WriteOperation, as caller: Caller) async -> Result<WriteOutcome, DatabaseError> {
        await withCheckedContinuation { continuation in
            database.write(operation, as: caller) { continuation.resume(returning: $0) }
        }
    }

    @Test func everyWriterIsSeenWithTheValueBeforeAndTheAppliedOperation() async throws {
        let directory = TemporaryDirectory()
        let store = try SQLiteTreeStore(directory: directory.path)
        defer { store.close() }
        let seen = Seen()
        let database = try Self.database(store, seen: seen)
        let user = Caller(auth: .object(["uid": .string("u1")]))
        _ = try await Self.write(database, .set(WriteEntry(path: Self.path("/a"), value: .int(1))), as: user).get()
        let stamp = JSONValue.object([".sv": .string("timestamp")])
        _ = try await Self.write(database, .set(WriteEntry(path: Self.path("/a"), value: stamp)), as: Caller(auth: .null, isAdmin: true)).get()
        let calls = seen.calls.withLock { $0 }
        #expect(calls.count == 2)
        #expect(calls[0].caller == user && calls[0].before == .null)
        #expect(calls[1].caller.isAdmin && calls[1].before == .int(1))
        guard case .set(let entry) = calls[1].applied, case .int? = entry.value else {
            Issue.record("the effects saw the server value unresolved: \(calls[1].applied)"); return
        }
        // onDisconnect operations run through the core too.
        let ledger = OnDisconnectLedger(records: SQLiteOnDisconnectStore(store: store), database: database)
        try ledger.register(session: "s", .init(position: 0, operation: .set(WriteEntry(path: Self.path("/b"), value: .int(2))), caller: user))
        #expect(try ledger.runLeftovers() == 1)
        #expect(seen.calls.withLock { $0.count } == 3)
    }

    @Test func effectsThatThrowRefuseTheWrite() async throws {
        let directory = TemporaryDirectory()
        let store = try SQLiteTreeStore(directory: directory.path)
        defer { store.close() }
        let database = try Self.database(store, seen: Seen(), refuse: true)
        guard case .failure(.tooManyTriggerEvents(limit: 1)) = await Self.write(database, .set(WriteEntry(path: Self.path("/a"), value: .int(1))), as: .unauthenticated) else {
            Issue.record("the write was not refused"); return
        }
        #expect(try store.readSync { try $0.value(at: Self.path("/a")) } == .null)
    }
}
