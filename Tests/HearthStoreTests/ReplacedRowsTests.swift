import HearthJSON
import Testing
@testable import HearthSQLite
@testable import HearthStore

/// What a write replaces, counted before it applies (`SQLiteTreeStore.replacedRows`): an
/// empty spot is found in one probe, and the probe's range, which also holds
/// siblings sorting between a key and its "/", never turns them into replaced rows.
@Suite struct ReplacedRowsTests {
    let dir = TemporaryDirectory()

    func count(_ store: SQLiteTreeStore, _ paths: [String], limit: Int = 100) throws -> (total: Int, perEntry: [Int]) {
        let operation = WriteOperation.update(base: .root, entries: paths.map { WriteEntry(path: path($0), value: .int(0)) })
        return try store.onWriter { connection in
            var perEntry: [Int] = []
            let total = try SQLiteTreeStore.replacedRows(operation, connection: connection, limit: limit, perEntry: &perEntry)
            return (total, perEntry)
        }
    }

    @Test func nothingStoredAtOrBelowAPathCountsZeroWhateverItsSiblings() throws {
        let store = try SQLiteTreeStore(directory: dir.path)
        #expect(try count(store, ["a"]) == (0, [0]))
        // Between "a" and "a/" in byte order: in the probe's range, not below "a".
        try store.put("a-2", .int(1))
        try store.put("a 3/x", .int(1))
        try store.put("a0", .int(1))
        #expect(try count(store, ["a"]) == (0, [0]))
    }

    @Test func aLeafAtThePathCountsOneFromTheProbeAlone() throws {
        let store = try SQLiteTreeStore(directory: dir.path)
        try store.put("u/f/note", .string("old"))
        try store.put("u/f/note-2", .string("sibling"))
        #expect(try count(store, ["u/f/note"]) == (1, [1]))
        #expect(try count(store, ["u/f/note"], limit: 0).total == 1)
        #expect(try count(store, ["u/f"]) == (2, [2]))
    }

    @Test func theKeyItselfAndEveryRowBelowItCount() throws {
        let store = try SQLiteTreeStore(directory: dir.path)
        try store.put("a-2", .int(1))
        try store.put("a", .int(1))
        #expect(try count(store, ["a"]) == (1, [1]))
        try store.put("a", obj(["x": .int(1), "y": obj(["z": .int(2)])]))
        try store.put("b", .int(3))
        #expect(try count(store, ["a", "b", "c"]) == (3, [2, 1, 0]))
    }

    @Test func countingStopsPastTheLimit() throws {
        let store = try SQLiteTreeStore(directory: dir.path)
        try store.put("a", .object(Dictionary(uniqueKeysWithValues: (0..<10).map { (JSONKey("k\($0)"), JSONValue.int(Int64($0))) })))
        let (total, _) = try count(store, ["a"], limit: 3)
        #expect(total == 4)
    }
}
