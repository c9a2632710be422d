import HearthJSON
import HearthRules
import HearthSQLite
import HearthStore
import HearthTesting
import Synchronization
import Testing
@testable import HearthDatabase

/// A restart's leftover onDisconnect operations are read a page at a time, not all at once,
/// and every one of them still runs, each session's in its order.
@Suite struct LeftoverPagesTests {
    /// The real store's records, with each page the ledger read noted.
    final class NotedRecords: OnDisconnectRecords {
        let store: SQLiteOnDisconnectStore
        let pages = Mutex<[[String]]>([])

        init(store: SQLiteOnDisconnectStore) { self.store = store }

        func add(_ record: OnDisconnectRecord) throws { try store.add(record) }
        func remove(session: String, positions: [Int64]) throws { try store.remove(session: session, positions: positions) }
        func removeAll(session: String) throws { try store.removeAll(session: session) }
        func orphans(after: String?, bytes: Int) throws -> [OnDisconnectRecord] {
            let page = try store.orphans(after: after, bytes: bytes)
            pages.withLock { $0.append(page.map(\.session)) }
            return page
        }
    }

    static func path(_ text: String) -> DataPath { try! DataPath(string: text) }

    /// Seven sessions of two operations each and one whose record does not decode, read
    /// 200 bytes a page (a session's two records are about 130 bytes): two sessions a page,
    /// four pages and an empty one. Every operation runs, each session's last write last,
    /// and no record is left, the undecodable one included.
    @Test func leftoversAreReadAPageOfSessionsAtATime() throws {
        let directory = TemporaryDirectory()
        let store = try SQLiteTreeStore(directory: directory.path)
        defer { store.close() }
        let database = Database(store: store, policy: RulesAccessPolicy(rules: try RuleSet.compile(#"{"rules": {".read": true, ".write": true}}"#)))
        let records = NotedRecords(store: SQLiteOnDisconnectStore(store: store))
        let ledger = OnDisconnectLedger(records: records, database: database)
        let who = Caller(auth: .object(["uid": .string("u1")]))
        for session in 0..<7 {
            for (position, value) in ["first", "last"].enumerated() {
                try ledger.register(session: "s\(session)", .init(
                    position: Int64(position), operation: .set(WriteEntry(path: Self.path("/p/\(session)"), value: .string(value))), caller: who))
            }
        }
        try records.add(OnDisconnectRecord(session: "s3x", position: 0, operation: "{}", caller: "{}"))

        #expect(try ledger.runLeftovers(bytesPerRead: 200) == 14)
        let pages = records.pages.withLock { $0 }.map { Array(Set($0)).sorted() }
        #expect(pages == [["s0", "s1"], ["s2", "s3"], ["s3x", "s4", "s5"], ["s6"], []])
        for session in 0..<7 {
            #expect(try store.readSync { try $0.value(at: Self.path("/p/\(session)")) } == .string("last"))
        }
        // A session's records are forgotten before its run completes, and the run waits
        // for every run it started: none is left.
        #expect(try records.store.orphans(after: nil, bytes: 1 << 20).isEmpty)
        #expect(try ledger.runLeftovers() == 0)
    }
}
