import HearthTesting
import Foundation
import HearthJSON
import Testing
@testable import HearthSQLite
@testable import HearthStore

/// `TreeImport` and `TreeExport`: streamed, validated like a PUT, one transaction.
@Suite struct TreeTransferTests {
    let dir = TemporaryDirectory()

    func importJSON(_ text: String, at location: String = "/", chunkBytes: Int = 7) throws(MaintenanceError) -> TreeImport.Summary {
        var reader = JSONStreamReader(bytes: Array(text.utf8), chunkBytes: chunkBytes)
        return try TreeImport.run(directory: dir.path, at: path(location), reader: &reader)
    }

    func exportJSON(at location: String = "/") throws -> String {
        var out: [UInt8] = []
        _ = try TreeExport.run(directory: dir.path, at: path(location)) { bytes throws(MaintenanceError) in out += bytes }
        return String(decoding: out, as: UTF8.self)
    }

    @discardableResult
    func withStore<T>(_ body: (SQLiteTreeStore) throws -> T) throws -> T {
        let store = try SQLiteTreeStore(directory: dir.path)
        defer { store.close() }
        return try body(store)
    }

    /// Whatever a PUT of the same value would store, an import stores; the export reads it back.
    @Test func importStoresWhatAPutWouldStore() throws {
        var generator = Seeded(seed: 11)
        let other = TemporaryDirectory()
        for round in 0..<60 {
            let value = Self.randomTree(depth: 0, using: &generator)
            let text = JSONWriter.string(value, style: round % 2 == 0 ? .compact : .pretty)
            _ = try importJSON(text, chunkBytes: 1 + round % 9)
            let expected = try FirebaseTree.normalize(value, at: .root)
            let reference = try SQLiteTreeStore(directory: other.path)
            try reference.put("", expected)
            let stored = try withStore { try $0.get("") }
            #expect(stored == (try reference.get("")), "\(text)")
            reference.close()
            let exported = try exportJSON()
            #expect(try JSONParser.parse(exported) == stored)
        }
    }

    static func randomTree(depth: Int, using generator: inout Seeded) -> JSONValue {
        let keys = ["a", "b", "10", "9", "2", "a b", "a!", "a0", "é", "z"]
        switch generator.next() % (depth > 3 ? 4 : 7) {
        case 0: return .null
        case 1: return .int(Int64(bitPattern: generator.next()) >> 40)
        case 2: return .double(Double(generator.next() % 1000) / 8)
        case 3: return .string(keys[Int(generator.next() % 10)])
        case 4: return .array((0..<Int(generator.next() % 4)).map { _ in randomTree(depth: depth + 1, using: &generator) })
        default:
            var members: [String: JSONValue] = [:]
            for _ in 0..<Int(generator.next() % 5) {
                members[keys[Int(generator.next() % 10)]] = randomTree(depth: depth + 1, using: &generator)
            }
            return .object(members)
        }
    }

    @Test func exportThenImportGivesTheSameBytes() throws {
        _ = try importJSON(#"{"users":{"u1":{"name":"A","tags":["x","y"],"score":9.5,"ok":true},"u10":{"n":-3},"u2":{"n":1e300}},"k":"v"}"#)
        let first = try exportJSON()
        let copy = TemporaryDirectory()
        var reader = JSONStreamReader(bytes: Array(first.utf8))
        _ = try TreeImport.run(directory: copy.path, at: .root, reader: &reader)
        var second: [UInt8] = []
        _ = try TreeExport.run(directory: copy.path, at: .root) { bytes throws(MaintenanceError) in second += bytes }
        #expect(String(decoding: second, as: UTF8.self) == first)
        #expect(first == #"{"k":"v","users":{"u1":{"name":"A","ok":true,"score":9.5,"tags":{"0":"x","1":"y"}},"u10":{"n":-3},"u2":{"n":1e+300}}}"#)
    }

    @Test func exportOfALeafASubtreeAndNothing() throws {
        _ = try importJSON(#"{"a":{"b":{"c":1},"b c":2},"s":"text"}"#)
        #expect(try exportJSON(at: "/s") == #""text""#)
        #expect(try exportJSON(at: "/a") == #"{"b c":2,"b":{"c":1}}"#)
        #expect(try exportJSON(at: "/missing") == "null")
        _ = try importJSON("42")
        #expect(try exportJSON() == "42")
        _ = try importJSON("null")
        #expect(try exportJSON() == "null")
    }

    /// An import at a path replaces only that path; leaves above it give way.
    @Test func importAtAPathReplacesOnlyThatPath() throws {
        try withStore { store in
            try store.put("keep", .int(1))
            try store.put("a", .string("leaf"))
        }
        _ = try importJSON(#"{"c":[1,2]}"#, at: "/a/b")
        #expect(try withStore { try $0.get("") } == obj(["keep": .int(1), "a": obj(["b": obj(["c": obj(["0": .int(1), "1": .int(2)])])])]))
        _ = try importJSON("{}", at: "/a")
        #expect(try withStore { try $0.get("") } == obj(["keep": .int(1)]))
    }

    // MARK: Validation: every problem names its path and leaves the database unchanged

    static let invalid: [(String, MaintenanceError)] = [
        (#"{"a":{"b":{"c.d":1}}}"#, .tree(.invalidKey(key: "c.d", problem: .forbiddenCharacter("."), under: path("a/b")))),
        (#"{"a":[{"$x":1}]}"#, .tree(.invalidKey(key: "$x", problem: .forbiddenCharacter("$"), under: path("a/0")))),
        (#"{"a":{"":1}}"#, .tree(.invalidKey(key: "", problem: .empty, under: path("a")))),
        (#"{"a":{"x\u0001":1}}"#, .tree(.invalidKey(key: "x\u{1}", problem: .forbiddenCharacter("\u{1}"), under: path("a")))),
        (#"{"a":{".priority":1}}"#, .tree(.unsupportedPseudoKey(key: ".priority", under: path("a")))),
        (#"{"a":{".sv":"timestamp"}}"#, .serverValue(under: path("a"))),
        (#"{"a":1,"a":2}"#, .duplicateKey(at: path("a"))),
        (#"{"b":{"x":1},"a":1,"b":{"y":2}}"#, .duplicateKey(at: path("b"))),
        (#"{"a":{"b":1}"#, .json(.syntax(.unexpectedEndOfInput(offset: 12)))),
        (#"{"a":tru}"#, .json(.syntax(.unexpectedByte(UInt8(ascii: "}"), offset: 8)))),
    ]

    @Test(arguments: 0..<invalid.count)
    func invalidDataIsRefusedWithItsPathAndChangesNothing(_ index: Int) throws {
        let (text, expected) = Self.invalid[index]
        try withStore { try $0.put("before", .string("unchanged")) }
        #expect(throws: expected) { try importJSON(text) }
        #expect(try withStore { try $0.get("") } == obj(["before": .string("unchanged")]))
    }

    @Test func aKeyMayRepeatOnlyAfterANull() throws {
        _ = try importJSON(#"{"a":null,"a":1,"b":{},"b":2}"#)
        #expect(try exportJSON() == #"{"a":1,"b":2}"#)
    }

    @Test func keyLengthLimit() throws {
        let longest = String(repeating: "k", count: DataPath.maxKeyBytes)
        _ = try importJSON("{\"\(longest)\":1}")
        let tooLong = longest + "k"
        #expect(throws: MaintenanceError.tree(.invalidKey(key: tooLong, problem: .tooLong(bytes: DataPath.maxKeyBytes + 1), under: .root))) {
            try importJSON("{\"\(tooLong)\":1}")
        }
    }

    /// Leaves `DataPath.maxSegments` deep are fine; one level more is refused.
    @Test func depthLimit() throws {
        func nested(_ levels: Int) -> String {
            String(repeating: "{\"k\":", count: levels) + "1" + String(repeating: "}", count: levels)
        }
        _ = try importJSON(nested(DataPath.maxSegments))
        let parent = DataPath(uncheckedSegments: Array(repeating: "k", count: DataPath.maxSegments))
        #expect(throws: MaintenanceError.tree(.tooDeep(depth: DataPath.maxSegments + 1, under: parent))) {
            try importJSON(nested(DataPath.maxSegments + 1))
        }
        // At a path, the path's own segments count.
        #expect(throws: MaintenanceError.tree(.tooDeep(depth: DataPath.maxSegments + 1, under: parent))) {
            try importJSON(nested(DataPath.maxSegments - 1), at: "/k/k")
        }
    }

    @Test func stringLimit() throws {
        let longest = String(repeating: "s", count: FirebaseTree.maxStringBytes)
        _ = try importJSON("{\"a\":\"\(longest)\"}", chunkBytes: JSONStreamReader.defaultChunkBytes)
        #expect(throws: MaintenanceError.tree(.stringTooLong(bytes: FirebaseTree.maxStringBytes + 1, at: path("a")))) {
            try importJSON("{\"a\":\"\(longest)s\"}", chunkBytes: JSONStreamReader.defaultChunkBytes)
        }
    }

    // MARK: The rest of the database

    /// The change log gets no record: it is emptied and its sequence moves on, so resuming
    /// streams start over. Query indexes at, above or below the path are dropped.
    @Test func changeLogAndQueryIndexes() throws {
        let before = try withStore { store in
            try store.put("scores/a", obj(["n": .int(1)]))
            try store.put("other/x", obj(["n": .int(1)]))
            store.buildQueryIndex(at: path("scores"), spec: "n")
            store.buildQueryIndex(at: path("other"), spec: "n")
            return try store.readSync { try $0.lastChangeSeq() }
        }
        let summary = try importJSON(#"{"a":{"n":5},"b":{"n":2}}"#, at: "/scores")
        #expect(summary.leaves == 2)
        #expect(summary.seq == before + 1)
        try withStore { store in
            let (changes, oldest) = try store.changes(after: 0, limit: 10)
            #expect(changes.isEmpty && oldest == nil)
            #expect(try store.readSync { try $0.lastChangeSeq() } == before + 1)
            let locations = try store.onReader { connection in
                try connection.scalarText("SELECT group_concat(location) FROM query_index_built")
            }
            #expect(locations == "other")  // only the index the import could not touch is left
            let query = TreeQuery(orderBy: .child(path("n")), limit: .first(1))
            #expect(try store.readSync { try $0.query(query, at: path("scores")) } == obj(["b": obj(["n": .int(2)])]))
        }
    }

    @Test func importIsRefusedWhileTheDatabaseIsInUse() throws {
        try withStore { store in
            try store.put("a", .int(1))
            let file = dir.path + "/" + SQLiteTreeStore.fileName
            #expect(throws: MaintenanceError.inUse(path: file)) { try importJSON("{}") }
            #expect(try store.get("a") == .int(1))
        }
        // Export reads beside a running store.
        let exported = try withStore { _ in try exportJSON() }
        #expect(exported == #"{"a":1}"#)
    }

    @Test func exportRefusesWhatIsNotAHearthDatabase() throws {
        let empty = TemporaryDirectory()
        #expect(throws: MaintenanceError.missing(path: empty.path + "/hearth.sqlite")) {
            _ = try TreeExport.run(directory: empty.path, at: .root) { _ throws(MaintenanceError) in }
        }
        let file = empty.path + "/hearth.sqlite"
        #expect(FileManager.default.createFile(atPath: file, contents: Data("not a database at all, just some text that is long enough".utf8)))
        #expect(throws: MaintenanceError.notHearthDatabase(path: file, reason: "not an SQLite database")) {
            _ = try TreeExport.run(directory: empty.path, at: .root) { _ throws(MaintenanceError) in }
        }
    }
}

/// SplitMix64 (HearthTesting): reproducible random trees.
typealias Seeded = SplitMix64
