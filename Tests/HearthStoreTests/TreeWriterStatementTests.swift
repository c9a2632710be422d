import Dispatch
import HearthJSON
import Synchronization
import Testing
@testable import HearthSQLite
@testable import HearthStore

/// The statements the writer leaves out: the deletes at a new path, the
/// priorities' deletes while no node has a priority, and the ancestors' deletes in one
/// statement. Each case checks that what they would have deleted is still deleted.
@Suite struct TreeWriterStatementTests {
    let dir = TemporaryDirectory()

    func open(observeCommit: (@Sendable (Int, UInt64) -> Void)? = nil) throws -> SQLiteTreeStore {
        try SQLiteTreeStore(directory: dir.path, observeCommit: observeCommit)
    }

    func priorities(_ store: SQLiteTreeStore) throws -> Int64 {
        try store.onWriter { try $0.scalarInt("SELECT count(*) FROM priorities") } ?? -1
    }

    @Test func aWriteInTheSameTransactionAsThePriorityItReplacesClearsIt() throws {
        let store = try open()
        try store.onWriter { connection in
            try connection.execute("BEGIN IMMEDIATE")
            #expect(try TreeWriter.prioritiesExist(connection) == false)
            var writer = TreeWriter(connection: connection, mayHavePriorities: false)
            try writer.apply(WriteEntry(path: path("a/b"), value: obj([".value": .int(1), ".priority": .int(5)])))
            #expect(writer.mayHavePriorities)
            #expect(try TreeWriter.prioritiesExist(connection))
            try writer.apply(WriteEntry(path: path("a"), value: obj(["c": .int(2)])))
            try connection.execute("COMMIT")
        }
        #expect(try priorities(store) == 0)
        #expect(try store.get("a") == obj(["c": .int(2)]))
    }

    @Test func writesCommittedInOneBatchClearAPriorityStoredEarlierInIt() throws {
        let commits = Mutex<[Int]>([])
        let store = try open(observeCommit: { writes, _ in commits.withLock { $0.append(writes) } })
        let done = DispatchSemaphore(value: 0)
        let failures = Mutex(0)
        // Queued while the writer is busy, so both commit in the next batch, whose
        // transaction started with no priority stored.
        try store.onWriter { _ in
            for operation in [
                WriteOperation.set(WriteEntry(path: path("x/y"), value: obj([".value": .string("v"), ".priority": .string("p")]))),
                WriteOperation.set(WriteEntry(path: path("x"), value: obj(["z": .bool(true)]))),
            ] {
                store.write(operation) { result in
                    if case .failure = result { failures.withLock { $0 += 1 } }
                    done.signal()
                }
            }
        }
        for _ in 0..<2 { done.wait() }
        #expect(failures.withLock { $0 } == 0)
        #expect(commits.withLock { $0 } == [2])
        #expect(try priorities(store) == 0)
        #expect(try store.readSync { try ($0 as! SQLiteTreeView).exportValue(at: path("x")) } == obj(["z": .bool(true)]))
    }

    @Test func aPriorityStoredInAnEarlierTransactionIsStillCleared() throws {
        let store = try open()
        try store.put("p", obj([".value": .int(1), ".priority": .int(3)]))
        #expect(try priorities(store) == 1)
        try store.put("p", .int(2))
        #expect(try priorities(store) == 0)
    }

    @Test func aNewPathBelowTheDeepestAncestorsReplacesTheirLeaves() throws {
        let store = try open()
        // The deepest path there is: every ancestor, the root included, in one statement.
        let segments = (0..<DataPath.maxSegments).map { "k\($0)" }
        let deepest = segments.joined(separator: "/")
        try store.put("", .string("root leaf"))
        try store.put(deepest, .int(1))
        #expect(try store.get(deepest) == .int(1))
        #expect(try store.onWriter { try $0.scalarInt("SELECT count(*) FROM nodes") } == 1)
        let middle = segments.prefix(DataPath.maxSegments / 2).joined(separator: "/")
        try store.put(middle, .string("leaf"))
        try store.put(deepest, .int(2))
        #expect(try store.get(deepest) == .int(2))
        #expect(try store.onWriter { try $0.scalarInt("SELECT count(*) FROM nodes") } == 1)
        #expect(TreeWriter.deleteAncestorsSQL.count > DataPath.maxSegments)
    }

    @Test func aSetAtAnOccupiedPathStillReplacesWhatWasThere() throws {
        let store = try open()
        try store.put("u/f/k", obj(["a": .int(1), "b": obj(["c": .int(2)])]))
        try store.put("u/f/k", obj(["z": .int(9)]))
        try store.put("u/f/k/z", .int(10))
        #expect(try store.get("u") == obj(["f": obj(["k": obj(["z": .int(10)])])]))
    }
}

extension TreeWriterStatementTests {
    /// A write's leaves go in INSERTs of `TreeWriter.rowsPerInsert` rows: every count
    /// around the limit stores every leaf.
    @Test(arguments: [1, 7, TreeWriter.rowsPerInsert, TreeWriter.rowsPerInsert + 1, 2 * TreeWriter.rowsPerInsert + 5])
    func aWriteOfManyLeavesStoresEachOnce(leaves: Int) throws {
        let store = try open()
        var members: [JSONKey: JSONValue] = [:]
        for index in 0..<leaves { members[JSONKey("k\(index)")] = index % 2 == 0 ? .int(Int64(index)) : .string("v\(index)") }
        try store.put("w", .object(members))
        #expect(try store.get("w") == .object(members))
        #expect(try store.onWriter { try $0.scalarInt("SELECT count(*) FROM nodes") } == Int64(leaves))
    }
}

/// The ancestors one transaction already cleared are not deleted again, unless
/// a write since stored a leaf there or a savepoint brought the old rows back.
extension TreeWriterStatementTests {
    func rows(_ connection: SQLiteConnection) throws -> Int64 {
        try connection.scalarInt("SELECT count(*) FROM nodes") ?? -1
    }

    /// `body` with a writer (no priorities stored, `cleared` already cleared) inside one
    /// committed transaction on `store`'s writer connection.
    func inTransaction(_ store: SQLiteTreeStore, cleared: Set<JSONKey> = [],
                       _ body: (SQLiteConnection, inout TreeWriter) throws -> Void) throws {
        try store.onWriter { connection in
            try connection.execute("BEGIN IMMEDIATE")
            var writer = TreeWriter(connection: connection, mayHavePriorities: false, clearedAncestors: cleared)
            try body(connection, &writer)
            try connection.execute("COMMIT")
        }
    }

    @Test func aLeafStoredAtAClearedAncestorIsReplacedByALaterWriteBelowIt() throws {
        let store = try open()
        try inTransaction(store) { _, writer in
            try writer.apply(WriteEntry(path: path("a/b"), value: .int(1)))      // clears "", "a"
            try writer.apply(WriteEntry(path: path("a"), value: .string("leaf")), replacesRows: true)
            try writer.apply(WriteEntry(path: path("a/c"), value: .int(2)))      // "a" is a leaf again
        }
        #expect(try store.get("a") == obj(["c": .int(2)]))
        #expect(try store.onWriter { try rows($0) } == 1)
    }

    @Test func writesBelowOneParentInOneTransactionEachKeepTheirLeaves() throws {
        let store = try open()
        try store.put("u", .string("leaf at an ancestor"))
        try inTransaction(store) { _, writer in
            for index in 0..<5 {
                try writer.apply(WriteEntry(path: path("u/f/k\(index)"), value: obj(["n": .int(Int64(index))])))
            }
        }
        #expect(try store.get("u/f") == .object(Dictionary(uniqueKeysWithValues: (0..<5).map { ("k\($0)", obj(["n": .int(Int64($0))])) })))
        #expect(try store.onWriter { try rows($0) } == 5)
    }

    @Test func aRolledBackSavepointMakesTheWriterClearAncestorsAgain() throws {
        let store = try open()
        try store.put("p", .string("leaf"))
        try inTransaction(store) { connection, writer in
            try connection.execute("SAVEPOINT w")
            try writer.apply(WriteEntry(path: path("p/q"), value: .int(1)))      // deletes the leaf at "p"
            try connection.execute("ROLLBACK TO w")
            try connection.execute("RELEASE w")
            writer.forgetCleared()                                              // the leaf is back
            try writer.apply(WriteEntry(path: path("p/r"), value: .int(2)))
        }
        #expect(try store.get("p") == obj(["r": .int(2)]))
        #expect(try store.onWriter { try rows($0) } == 1)
    }
}

/// The store carries the cleared ancestors from one transaction to the next.
extension TreeWriterStatementTests {
    @Test func aLeafStoredAtAnAncestorClearedInAnEarlierTransactionIsStillReplaced() throws {
        let store = try open()
        try store.put("a/b", .int(1))            // clears "", "a"; carried to the next batches
        try store.put("a", .string("leaf"))      // stores a row at "a" again
        try store.put("a/c", .int(2))            // must delete it
        #expect(try store.get("a") == obj(["c": .int(2)]))
        #expect(try store.onWriter { try rows($0) } == 1)
        try store.put("", .string("root leaf"))  // a root write stores a row at ""
        try store.put("x/y", .int(3))
        #expect(try store.get("") == obj(["x": obj(["y": .int(3)])]))
        #expect(try store.onWriter { try rows($0) } == 1)
    }

    @Test func aFullSetOfClearedAncestorsIsEmptiedAndTheirRowsStillDeleted() throws {
        let store = try open()
        try store.put("p/q", .string("leaf"))
        // One short of the limit; "p" and "p/q" are not among them.
        let full = Set((0..<(TreeWriter.maxClearedAncestors - 1)).map { JSONKey("k\($0)") })
        try inTransaction(store, cleared: full) { _, writer in
            try writer.apply(WriteEntry(path: path("p/q/r"), value: .int(1)))  // 3 ancestors: over the limit
            #expect(writer.cleared == ["", "p", "p/q"])
        }
        #expect(try store.get("p") == obj(["q": obj(["r": .int(1)])]))
        #expect(try store.onWriter { try rows($0) } == 1)
    }
}
