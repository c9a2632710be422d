import HearthJSON
import HearthSQLite
import HearthStore
import HearthTesting
import Testing
@testable import HearthServer
import HearthMaintenance

/// `StoreTransfer` (hearth copy, and backup/restore of a PostgreSQL store) between two
/// SQLite stores in this process: the engine protocol only, so what holds here holds for
/// any pair of engines; the PostgreSQL pairs run end to end (`StoreCopyEndToEndTests`,
/// `PostgresBackupEndToEndTests`).
@Suite struct StoreTransferTests {
    static func path(_ text: String) -> DataPath { try! DataPath(string: text) }

    static func members(_ count: Int, _ prefix: String) -> JSONValue {
        var object: [JSONKey: JSONValue] = [:]
        for i in 0..<count { object[JSONKey("\(prefix)\(i)")] = .int(Int64(i)) }
        return .object(object)
    }

    /// A subtree over one write's limit is copied child by child, in writes within it; the
    /// priority of that subtree's own node is reported, not silently lost; everything
    /// else (priorities below it, accounts, keys) arrives.
    @Test func aSubtreeLargerThanOneWriteIsCopiedChildByChild() throws {
        let (from, to) = (TemporaryDirectory(), TemporaryDirectory())
        let source = try SQLiteTreeStore(directory: from.path)
        defer { source.close() }
        // Two halves of 60% of the write limit each: /big is larger than one write.
        let half = StoreOptions.defaultMaxNodesPerWrite * 6 / 10
        try source.writeSync(.set(WriteEntry(path: Self.path("/big"), value: [".priority": 7, "a": Self.members(half, "a")])))
        try source.writeSync(.set(WriteEntry(path: Self.path("/big/b"), value: Self.members(half, "b"))))
        #expect(try source.readSync { try $0.priority(at: Self.path("/big")) } == 7)
        try source.writeSync(.set(WriteEntry(path: Self.path("/small"), value: [".priority": 1, "x": ["y": [".value": true, ".priority": "p"]]])))
        try source.accountStore.insert(UserRecord(uid: "u1", provider: .anonymous, createdAt: 1, validSince: 1))
        try source.accountStore.addRefreshToken(hash: "h1", uid: "u1", family: "f1", at: 1)
        try source.signingKeys.add(kid: "k1", privateKey: "key-one")

        let destination = try SQLiteTreeStore(directory: to.path)
        defer { destination.close() }
        let summary = try StoreTransfer.copy(from: source, to: destination, destinationName: "test")
        #expect(summary.leaves == 2 * half + 1)
        #expect(summary.users == 1 && summary.refreshTokens == 1 && summary.signingKeys == 1)
        #expect(summary.prioritiesNotMoved == [Self.path("/big")])
        for part in ["/big/a", "/big/b", "/small"] {
            let copied = try destination.readSync { try $0.exportValue(at: Self.path(part)) }
            #expect(copied == (try source.readSync { try $0.exportValue(at: Self.path(part)) }), "\(part)")
        }
        #expect(try destination.readSync { try $0.priority(at: Self.path("/big")) } == nil)
        #expect(try destination.accountStore.user(uid: "u1") != nil)
        #expect(try destination.signingKeys.load()?.current == "k1")
        // Into a store that holds data: refused, nothing written.
        #expect(throws: StoreTransfer.Failure.self) { try StoreTransfer.copy(from: source, to: destination, destinationName: "test") }
    }

    /// Paging through leaves (`leafRows`), as exports and copies do: every leaf once, in
    /// path byte order, pages after the last path seen, in one snapshot.
    @Test func leafRowsPageThroughASubtreeInPathOrder() throws {
        let dir = TemporaryDirectory()
        let store = try SQLiteTreeStore(directory: dir.path)
        defer { store.close() }
        try store.writeSync(.set(WriteEntry(path: Self.path("/t"), value: ["b": ["x": 1, "y": 2], "a": 3, "a0": 4, "c": "five"])))
        try store.writeSync(.set(WriteEntry(path: Self.path("/t0"), value: 6)))
        let pages: [[String]] = try store.readSync { view in
            var pages: [[String]] = []
            var after: String? = nil
            while true {
                let rows = try view.leafRows(at: Self.path("/t"), after: after, limit: 2)
                if rows.isEmpty { break }
                pages.append(rows.map(\.path))
                after = rows.last?.path
            }
            return pages
        }
        #expect(pages == [["t/a", "t/a0"], ["t/b/x", "t/b/y"], ["t/c"]])
        #expect(try store.readSync { try $0.leafRows(at: Self.path("/t/c"), after: nil, limit: 5).map(\.value) } == ["five"])
        #expect(try store.readSync { try $0.leafRows(at: Self.path("/none"), after: nil, limit: 5).isEmpty })
        #expect(try store.readSync { try $0.leafRows(at: .root, after: nil, limit: 10).count } == 6)
    }
}
