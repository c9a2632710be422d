import HearthJSON
import HearthRules
import HearthSQLite
import HearthStore
import HearthTesting
import Synchronization
import Testing
@testable import HearthDatabase

/// The core's reads and writes over a real store, with the reference-style rules written
/// as literals: what each transport adapter relies on.
@Suite struct DatabaseTests {
    static let rules = #"""
    {"rules": {
      "users": {"$uid": {".read": "auth != null && auth.uid == $uid", ".write": "auth != null && auth.uid == $uid",
                         "n": {".validate": "newData.isNumber()"}}},
      "open": {".read": true, ".write": true}
    }}
    """#
    let directory = TemporaryDirectory()
    let store: SQLiteTreeStore
    let database: Database
    let cache = ReadCache()

    init() throws {
        let cache = self.cache
        store = try SQLiteTreeStore(directory: directory.path, onCommit: { changes, _ in
            cache.invalidate(changes.map(\.path.storageKey))
        })
        database = Database(store: store, policy: RulesAccessPolicy(rules: try RuleSet.compile(Self.rules)), readCache: cache)
    }

    static func path(_ text: String) -> DataPath { try! DataPath(string: text) }
    static let alice = Caller(auth: .object(["uid": .string("alice")]))
    static let bob = Caller(auth: .object(["uid": .string("bob")]))

    func write(_ operation: WriteOperation, as caller: Caller, precondition: Database.Precondition? = nil) async -> Result<WriteOutcome, DatabaseError> {
        await withCheckedContinuation { continuation in
            database.write(operation, as: caller, precondition: precondition) { continuation.resume(returning: $0) }
        }
    }

    func readRendered(_ text: String, as caller: Caller) async -> Result<[UInt8], DatabaseError> {
        await withCheckedContinuation { continuation in
            database.readRendered(Self.path(text), as: caller) { continuation.resume(returning: $0) }
        }
    }

    func set(_ text: String, _ value: JSONValue?) -> WriteOperation {
        .set(WriteEntry(path: Self.path(text), value: value))
    }

    @Test func theRulesGateReadsAndWritesPerCaller() async throws {
        #expect(try await write(set("/users/alice/n", .int(1)), as: Self.alice).get().seq > 0)
        guard case .failure(.permissionDenied(.notGranted?)) = await write(set("/users/alice/n", .int(2)), as: Self.bob) else {
            Issue.record("bob wrote alice's data"); return
        }
        guard case .failure(.permissionDenied(.validationFailed?)) = await write(set("/users/alice/n", .string("x")), as: Self.alice) else {
            Issue.record("a failed .validate was not reported as such"); return
        }
        #expect(try await readRendered("/users/alice", as: Self.alice).get() == Array(#"{"n":1}"#.utf8))
        guard case .failure(.permissionDenied) = await readRendered("/users/alice", as: Self.bob) else {
            Issue.record("bob read alice's data"); return
        }
        // Admins skip the rules.
        #expect(try await readRendered("/users/alice", as: Caller(auth: .null, isAdmin: true)).get() == Array(#"{"n":1}"#.utf8))
    }

    /// A rendered read is cached only for decisions that did not look at data, and a
    /// write drops it before it is acknowledged.
    @Test func renderedReadsComeFromTheCacheUntilAWriteDropsThem() async throws {
        _ = try await write(set("/open/a", .int(1)), as: .unauthenticated).get()
        #expect(try await readRendered("/open/a", as: .unauthenticated).get() == Array("1".utf8))
        #expect(try await readRendered("/open/a", as: .unauthenticated).get() == Array("1".utf8))
        #expect(cache.stats.hits == 1)
        _ = try await write(set("/open/a", .int(2)), as: .unauthenticated).get()
        #expect(try await readRendered("/open/a", as: .unauthenticated).get() == Array("2".utf8))
    }

    /// Compare-and-set with any tag function: a match writes, a mismatch reports the
    /// current value and its tag, and whether the caller may see it.
    @Test func compareAndSetReportsStaleWithTheCurrentValue() async throws {
        let tag: @Sendable (JSONValue) -> String = { String(decoding: JSONWriter.write($0), as: UTF8.self) }
        _ = try await write(set("/users/alice/n", .int(1)), as: Self.alice).get()
        let stale = await write(set("/users/alice/n", .int(5)), as: Self.alice, precondition: .init(expected: "0", tag: tag))
        guard case .failure(.stale(let current, let currentTag)) = stale else {
            Issue.record("expected stale, got \(stale)"); return
        }
        #expect(current == .int(1) && currentTag == "1")
        #expect(try await write(set("/users/alice/n", .int(5)), as: Self.alice, precondition: .init(expected: "1", tag: tag)).get().seq > 0)
        #expect(try store.readSync { try $0.value(at: Self.path("/users/alice/n")) } == .int(5))
        // The rules come first: a stranger learns nothing from a precondition.
        guard case .failure(.permissionDenied) = await write(set("/users/alice/n", .int(6)), as: Self.bob, precondition: .init(expected: "5", tag: tag)) else {
            Issue.record("bob's compare-and-set was not denied"); return
        }
    }

    /// The write request's two compare-and-sets: REST's `if-match` tags the stored value
    /// without its priority, the wire protocol's `h` with it (the SDKs' node hash does).
    @Test func anETagIgnoresPrioritiesAndANodeHashCoversThem() async throws {
        let tag: @Sendable (JSONValue) -> String = { String(decoding: JSONWriter.write($0), as: UTF8.self) }
        let withPriority = try WriteRequest.set(.object([".value": .int(1), ".priority": .int(2)]), at: Self.path("/open/p"))
        _ = try await write(withPriority, as: .unauthenticated).get()
        let byETag = await write(set("/open/p", .int(3)), as: .unauthenticated, precondition: .ifMatch("x", etagOf: tag))
        guard case .failure(.stale(_, let etag)) = byETag else { Issue.record("expected stale, got \(byETag)"); return }
        #expect(etag == "1")
        let byHash = await write(set("/open/p", .int(3)), as: .unauthenticated, precondition: .ifHash("x", nodeHash: tag))
        guard case .failure(.stale(let current, let hash)) = byHash else { Issue.record("expected stale, got \(byHash)"); return }
        #expect(current == .int(1) && hash.contains("priority") && hash != etag)
        #expect(try await write(set("/open/p", .int(3)), as: .unauthenticated, precondition: .ifHash(hash, nodeHash: tag)).get().seq > 0)
        #expect(try await write(set("/open/p", .int(4)), as: .unauthenticated, precondition: .ifMatch("3", etagOf: tag)).get().seq > 0)
    }

    @Test func storeFailuresMapToTransportNeutralErrors() {
        guard case .unavailable = DatabaseError.from(StoreError.closed) else { Issue.record("closed"); return }
        guard case .storageFull = DatabaseError.from(StoreError.sqlite(code: 13, message: "full", operation: "exec")) else { Issue.record("full"); return }
        guard case .tooLarge(.writes(limit: 3)) = DatabaseError.from(WriteFailure.tooLarge(.writes(limit: 3))) else { Issue.record("too large"); return }
        guard case .permissionDenied = DatabaseError.from(WriteFailure.rejected(DatabaseError.permissionDenied(nil))) else { Issue.record("rejected"); return }
        guard case .internalError = DatabaseError.from(StoreError.corrupt("x")) else { Issue.record("corrupt"); return }
        // A write that certainly did not commit, and one whose commit went unanswered.
        let lost = StoreError.engine(EngineFailure(engine: "postgres", code: "connection", kind: .unavailable, message: "gone", operation: "commit"))
        guard case .unavailable = DatabaseError.from(WriteFailure.store(lost)) else { Issue.record("not written"); return }
        guard case .outcomeUnknown = DatabaseError.from(WriteFailure.outcomeUnknown(lost)) else { Issue.record("outcome unknown"); return }
    }
}

/// The persisted form of onDisconnect operations round-trips, and a ledger over a real
/// store runs what an earlier run left, once.
@Suite struct OnDisconnectLedgerTests {
    static func path(_ text: String) -> DataPath { try! DataPath(string: text) }

    @Test func operationsAndCallersRoundTrip() {
        let operations: [WriteOperation] = [
            .set(WriteEntry(path: Self.path("/a/b"), value: .object(["x": .int(1), "t": .object([".sv": .string("timestamp")])]))),
            .set(WriteEntry(path: Self.path("/a"), value: nil)),
            .update(base: Self.path("/p"), entries: [WriteEntry(path: Self.path("/p/q"), value: .string("v")),
                                                    WriteEntry(path: Self.path("/p/r/s"), value: nil)]),
        ]
        for operation in operations {
            #expect(OnDisconnectLedger.decodeOperation(OnDisconnectLedger.encode(operation)) == operation)
        }
        let caller = Caller(auth: .object(["uid": .string("u1"), "token": .object(["x": .bool(true)])]))
        #expect(OnDisconnectLedger.decodeCaller(OnDisconnectLedger.encode(caller)) == caller)
        #expect(OnDisconnectLedger.decodeCaller(OnDisconnectLedger.encode(Caller(auth: .null, isAdmin: true))) == Caller(auth: .null, isAdmin: true))
        #expect(OnDisconnectLedger.decodeOperation("{}") == nil)
    }

    @Test func leftoversRunOnceInRegistrationOrder() throws {
        let directory = TemporaryDirectory()
        let store = try SQLiteTreeStore(directory: directory.path)
        defer { store.close() }
        let database = Database(store: store, policy: RulesAccessPolicy(rules: try RuleSet.compile(#"{"rules": {".read": true, ".write": true}}"#)))
        let ledger = OnDisconnectLedger(records: SQLiteOnDisconnectStore(store: store), database: database)
        let who = Caller(auth: .object(["uid": .string("u1")]))
        try ledger.register(session: "s1", .init(position: 0, operation: .set(WriteEntry(path: Self.path("/p"), value: .string("first"))), caller: who))
        try ledger.register(session: "s1", .init(position: 1, operation: .set(WriteEntry(path: Self.path("/p"), value: .string("second"))), caller: who))
        try ledger.register(session: "s1", .init(position: 2, operation: .set(WriteEntry(path: Self.path("/q"), value: .int(1))), caller: who))
        try ledger.cancel(session: "s1", positions: [2])
        #expect(try ledger.runLeftovers() == 2)
        #expect(try store.readSync { try $0.value(at: Self.path("/p")) } == .string("second"))
        #expect(try store.readSync { try $0.value(at: Self.path("/q")) } == .null)
        #expect(try ledger.runLeftovers() == 0)
    }

    /// Leftovers handed to the writer a few sessions at a time (here one: every session
    /// passes a budget of one byte) all run, each session's in its order.
    @Test func leftoversRunInBoundedBatchesOfSessions() throws {
        let directory = TemporaryDirectory()
        let store = try SQLiteTreeStore(directory: directory.path)
        defer { store.close() }
        let database = Database(store: store, policy: RulesAccessPolicy(rules: try RuleSet.compile(#"{"rules": {".read": true, ".write": true}}"#)))
        let ledger = OnDisconnectLedger(records: SQLiteOnDisconnectStore(store: store), database: database)
        let who = Caller(auth: .object(["uid": .string("u1")]))
        for session in 0..<5 {
            for (position, value) in ["first", "last"].enumerated() {
                try ledger.register(session: "s\(session)", .init(
                    position: Int64(position), operation: .set(WriteEntry(path: Self.path("/p/\(session)"), value: .string(value))), caller: who))
            }
        }
        #expect(try ledger.runLeftovers(bytesInFlight: 1) == 10)
        for session in 0..<5 {
            #expect(try store.readSync { try $0.value(at: Self.path("/p/\(session)")) } == .string("last"))
        }
        #expect(try ledger.runLeftovers() == 0)
    }

    /// A leftover operation runs only while its registrant's sign-in stands, asked by user
    /// and token time from the rules' `auth`; a caller not signed in as a user always stands.
    @Test func leftoversOfARevokedSignInDoNotRun() throws {
        let directory = TemporaryDirectory()
        let store = try SQLiteTreeStore(directory: directory.path)
        defer { store.close() }
        let database = Database(store: store, policy: RulesAccessPolicy(rules: try RuleSet.compile(#"{"rules": {".read": true, ".write": true}}"#)))
        let asked = Mutex<[String]>([])
        let ledger = OnDisconnectLedger(records: SQLiteOnDisconnectStore(store: store), database: database) { uid, issuedAt in
            asked.withLock { $0.append("\(uid)@\(issuedAt)") }
            return uid == "kept"
        }
        func signedIn(_ uid: String) -> Caller {
            Caller(auth: .object(["uid": .string(uid), "token": .object(["iat": .int(7)])]))
        }
        #expect(signedIn("u").signedInAs?.uid == "u")
        #expect(signedIn("u").signedInAs?.issuedAt == 7)
        #expect(Caller(auth: .object(["uid": .string("u")])).signedInAs == nil)
        try ledger.register(session: "s1", .init(position: 0, operation: .set(WriteEntry(path: Self.path("/kept"), value: .int(1))), caller: signedIn("kept")))
        try ledger.register(session: "s1", .init(position: 1, operation: .set(WriteEntry(path: Self.path("/revoked"), value: .int(1))), caller: signedIn("revoked")))
        try ledger.register(session: "s1", .init(position: 2, operation: .set(WriteEntry(path: Self.path("/admin"), value: .int(1))), caller: Caller(auth: .null, isAdmin: true)))
        _ = try ledger.runLeftovers()
        #expect(try store.readSync { try $0.value(at: Self.path("/kept")) } == .int(1))
        #expect(try store.readSync { try $0.value(at: Self.path("/revoked")) } == .null)
        #expect(try store.readSync { try $0.value(at: Self.path("/admin")) } == .int(1))
        #expect(asked.withLock { $0.sorted() } == ["kept@7", "revoked@7"])
    }
}
