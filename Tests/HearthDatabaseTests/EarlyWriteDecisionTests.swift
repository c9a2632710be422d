import HearthJSON
import HearthRules
import HearthSQLite
import HearthStore
import HearthTesting
import Synchronization
import Testing
@testable import HearthDatabase

/// Writes the rules allow whatever the data and the time are allowed before they queue,
/// and the writer does not ask the rules again; every other write is decided on
/// the writer's view as before.
@Suite struct EarlyWriteDecisionTests {
    /// The rules policy, counting where each write was decided.
    final class CountingPolicy: AccessPolicy {
        let rules: RulesAccessPolicy
        let onWriter = Atomic<Int>(0)
        let early = Atomic<Int>(0)

        init(_ text: String) throws {
            rules = RulesAccessPolicy(rules: try RuleSet.compile(text))
        }

        func canRead(_ path: DataPath, query: RuleQuery?, caller: Caller, view: any TreeView) -> Bool {
            rules.canRead(path, query: query, caller: caller, view: view)
        }
        func canWrite(_ operation: WriteOperation, caller: Caller, view: any TreeView) -> Bool {
            writeAccess(operation, caller: caller, view: view).allowed
        }
        func writeAccess(_ operation: WriteOperation, caller: Caller, view: any TreeView) -> WriteAccess {
            onWriter.add(1, ordering: .relaxed)
            return rules.writeAccess(operation, caller: caller, view: view)
        }
        func readAccess(_ path: DataPath, query: RuleQuery?, caller: Caller, view: any TreeView) -> ReadAccess {
            rules.readAccess(path, query: query, caller: caller, view: view)
        }
        func indexes(at path: DataPath) -> [String] { rules.indexes(at: path) }
        func readAllowedWithoutData(_ path: DataPath, caller: Caller) -> Bool { rules.readAllowedWithoutData(path, caller: caller) }
        func writeAccessWithoutData(_ operation: WriteOperation, caller: Caller) -> WriteAccess? {
            let access = rules.writeAccessWithoutData(operation, caller: caller)
            if access?.allowed == true { early.add(1, ordering: .relaxed) }
            return access
        }
    }

    static let rules = #"""
    {"rules": {
      "users": {"$uid": {".write": "auth != null && auth.uid == $uid",
                         "$item": {".validate": "newData.hasChildren(['by']) && newData.child('by').val() == auth.uid"}}},
      "once": {"$key": {".write": "!data.exists()"}}
    }}
    """#
    let directory = TemporaryDirectory()
    let store: SQLiteTreeStore
    let policy: CountingPolicy
    let database: Database

    init() throws {
        store = try SQLiteTreeStore(directory: directory.path)
        policy = try CountingPolicy(Self.rules)
        database = Database(store: store, policy: policy)
    }

    static let alice = Caller(auth: .object(["uid": .string("alice")]))
    static let bob = Caller(auth: .object(["uid": .string("bob")]))

    func write(_ text: String, _ value: JSONValue?, as caller: Caller) async -> Result<WriteOutcome, DatabaseError> {
        let operation = WriteOperation.set(WriteEntry(path: try! DataPath(string: text), value: value))
        return await withCheckedContinuation { continuation in
            database.write(operation, as: caller) { continuation.resume(returning: $0) }
        }
    }

    func counts() -> (early: Int, onWriter: Int) {
        (policy.early.load(ordering: .relaxed), policy.onWriter.load(ordering: .relaxed))
    }

    @Test func aWriteAllowedWithoutDataIsNotDecidedAgainOnTheWriter() async throws {
        #expect(try await write("users/alice/i1", .object(["by": .string("alice")]), as: Self.alice).get().seq > 0)
        #expect(counts() == (1, 0))
        #expect(try store.readSync { try $0.value(at: DataPath(string: "users/alice/i1")) } == .object(["by": .string("alice")]))
    }

    @Test func aDenialIsStillMadeOnTheWriter() async throws {
        guard case .failure(.permissionDenied(.notGranted?)) = await write("users/alice/i1", .object(["by": .string("bob")]), as: Self.bob) else {
            Issue.record("bob wrote alice's data"); return
        }
        guard case .failure(.permissionDenied(.validationFailed?)) = await write("users/alice/i2", .object(["by": .string("bob")]), as: Self.alice) else {
            Issue.record("a forged 'by' passed"); return
        }
        #expect(counts() == (0, 2))
    }

    @Test func aRuleReadingTheDataIsDecidedOnTheWriterEachTime() async throws {
        #expect(try await write("once/k", .int(1), as: Self.alice).get().seq > 0)
        guard case .failure(.permissionDenied) = await write("once/k", .int(2), as: Self.alice) else {
            Issue.record("a create-only location was overwritten"); return
        }
        #expect(counts() == (0, 2))
    }

    @Test func serverValuesAndAdminsAreNotDecidedEarly() async throws {
        let stamped = JSONValue.object(["by": .string("alice"), "at": .object([".sv": .string("timestamp")])])
        #expect(try await write("users/alice/i3", stamped, as: Self.alice).get().seq > 0)
        #expect(counts() == (0, 1))
        #expect(try await write("once/admin", .int(1), as: Caller(auth: .null, isAdmin: true)).get().seq > 0)
        #expect(counts() == (0, 1))
    }
}
