import HearthJSON
import Testing
@testable import HearthSQLite
@testable import HearthStore

/// `StoreOptions.maxNodesPerWrite`: a write may write, and may replace or delete, at most
/// that many stored nodes.
@Suite struct WriteSizeTests {
    static func leaves(_ count: Int) -> JSONValue {
        .object(Dictionary(uniqueKeysWithValues: (0..<count).map { (JSONKey("k\($0)"), JSONValue.int(Int64($0))) }))
    }

    @Test func countingStopsJustPastTheLimit() {
        #expect(WriteSize.rows(in: Self.leaves(1_000), limit: 5) == 6)
        #expect(WriteSize.rows(in: Self.leaves(5), limit: 5) == 5)
        // A leaf with a priority is two rows; a priority on an object is one more.
        #expect(WriteSize.rows(in: obj([".value": .int(1), ".priority": .int(2)]), limit: 10) == 2)
        #expect(WriteSize.rows(in: obj(["a": .int(1), ".priority": .string("p")]), limit: 10) == 2)
        #expect(WriteSize.rows(in: .array([.int(1), .object(["b": .bool(true)])]), limit: 10) == 2)
        #expect(WriteSize.rows(in: .null, limit: 10) == 0)
    }

    /// At the default limit: one node more is refused before it reaches the writer, the
    /// limit itself is written.
    @Test func theDefaultLimitIsCrossedByOneNode() throws {
        let dir = TemporaryDirectory()
        let store = try SQLiteTreeStore(directory: dir.path)
        defer { store.close() }
        let limit = StoreOptions.defaultMaxNodesPerWrite
        do {
            try store.writeSync(.set(WriteEntry(path: path("/big"), value: Self.leaves(limit + 1))))
            Issue.record("\(limit + 1) nodes were written")
        } catch .tooLarge(let reason) {
            #expect(reason == .writes(limit: limit))
        } catch {
            Issue.record("unexpected \(error)")
        }
        #expect(try store.get("/big") == .null)
        try store.put("/big", Self.leaves(limit))
        #expect(try store.readSync { try $0.childKeys(at: path("/big")) }.count == limit)
    }

    @Test func replacingOrDeletingMoreThanTheLimitIsRefusedAndChangesNothing() throws {
        let dir = TemporaryDirectory()
        var options = StoreOptions()
        options.maxNodesPerWrite = 10
        let store = try SQLiteTreeStore(directory: dir.path, options: options)
        defer { store.close() }
        for name in ["p1", "p2", "p3"] { try store.put("/x/\(name)", Self.leaves(5)) }

        for operation in [
            WriteOperation.set(WriteEntry(path: path("/x"), value: nil)),
            .set(WriteEntry(path: path("/x"), value: .int(1))),
            .update(base: path("/x"), entries: [WriteEntry(path: path("/x/p1"), value: nil), WriteEntry(path: path("/x/p2"), value: nil),
                                               WriteEntry(path: path("/x/p3"), value: .string("v"))]),
            .set(WriteEntry(path: .root, value: nil)),
        ] {
            do {
                try store.writeSync(operation)
                Issue.record("\(operation) was written")
            } catch .tooLarge(let reason) {
                #expect(reason == .replaces(limit: 10))
            } catch {
                Issue.record("unexpected \(error)")
            }
        }
        #expect(try store.readSync { try $0.childKeys(at: path("/x")) }.sorted() == ["p1", "p2", "p3"])
        // Entries of one update are counted together: 6 + 6 written.
        do {
            try store.writeSync(.update(base: path("/y"), entries: [WriteEntry(path: path("/y/a"), value: Self.leaves(6)),
                                                                    WriteEntry(path: path("/y/b"), value: Self.leaves(6))]))
            Issue.record("12 nodes were written")
        } catch .tooLarge(let reason) {
            #expect(reason == .writes(limit: 10))
        } catch {
            Issue.record("unexpected \(error)")
        }
        // In parts, each within the limit, the same data goes.
        try store.put("/x/p1", nil)
        try store.put("/x", nil)
        #expect(try store.get("/x") == .null)
    }
}
