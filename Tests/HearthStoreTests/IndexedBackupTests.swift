import Foundation
import HearthJSON
import Testing
@testable import HearthSQLite
@testable import HearthStore

/// A database with a query index backs up and restores on the SQLite
/// the README and the Dockerfile install (Debian 12: 3.40.1), whose integrity check
/// reported "NULL value in query_index.rank" for the index's rows although none holds NULL.
@Suite struct IndexedBackupTests {
    let dir = TemporaryDirectory()
    let out = TemporaryDirectory()

    /// A store whose `fav` location has an index on `createdAt` with `count` children.
    static func indexedStore(_ directory: String, count: Int = 20) throws -> SQLiteTreeStore {
        let store = try SQLiteTreeStore(directory: directory)
        let children = (0..<count).map { i in ("f\(i)", JSONValue.object(["createdAt": .int(Int64(1_700_000_000_000 + i)), "name": .string("c\(i)")])) }
        try store.writeSync(.set(WriteEntry(path: path("fav"), value: .object(Dictionary(uniqueKeysWithValues: children)))))
        store.buildQueryIndex(at: path("fav"), spec: "createdAt")
        return store
    }

    static func rows(_ database: String, _ sql: String) throws -> Int64 {
        let connection = try SQLiteConnection(path: database, mode: .readWriteCreate)
        defer { connection.close() }
        return try connection.scalarInt(sql) ?? -1
    }

    /// Every `WITHOUT ROWID` table declares its primary key's columns first, in key order:
    /// the shape SQLite 3.40.0-3.41.0's integrity check reads correctly.
    @Test func everyWithoutRowidTableDeclaresItsKeyFirst() throws {
        let store = try SQLiteTreeStore(directory: dir.path)
        store.close()
        let connection = try SQLiteConnection(path: dir.path + "/" + SQLiteTreeStore.fileName, mode: .readWriteCreate)
        defer { connection.close() }
        let tables = try connection.statement("SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE '%WITHOUT ROWID%'")
        try tables.reset()
        var names: [String] = []
        while try tables.step() { names.append(tables.text(0)) }
        #expect(names.contains("query_index"))
        for table in names {
            let info = try connection.statement("SELECT pk FROM pragma_table_info('\(table)')")
            try info.reset()
            var positions: [Int64] = []
            while try info.step() { positions.append(info.int64(0)) }
            let keyCount = positions.filter { $0 > 0 }.count
            #expect(Array(positions.prefix(keyCount)) == (1...Int64(keyCount)).map { $0 }, "\(table): key columns \(positions)")
        }
    }

    /// The index is built, the backup passes its check, the restore too, and the restored
    /// store answers the indexed query from its index.
    @Test func anIndexedDatabaseBacksUpAndRestores() throws {
        let store = try Self.indexedStore(dir.path)
        let query = TreeQuery(orderBy: .child(path("createdAt")), limit: .last(2))
        let before = try store.readSync { try $0.query(query, at: path("fav")) }
        #expect(try store.integrityCheck() == "ok")
        let copy = out.path + "/copy.sqlite"
        try DatabaseFile.backup(databaseAt: dir.path + "/" + SQLiteTreeStore.fileName, to: copy)
        store.close()
        #expect(try Self.rows(copy, "SELECT count(*) FROM query_index") == 20)

        let restored = TemporaryDirectory()
        try DatabaseFile.restore(from: copy, intoDirectory: restored.path, force: false)
        let reopened = try SQLiteTreeStore(directory: restored.path)
        defer { reopened.close() }
        #expect(try reopened.integrityCheck() == "ok")
        #expect(try reopened.readSync { try $0.query(query, at: path("fav")) } == before)
        #expect(before == .object(["f18": .object(["createdAt": .int(1_700_000_000_018), "name": "c18"]),
                                   "f19": .object(["createdAt": .int(1_700_000_000_019), "name": "c19"])]))
    }

    /// A database from before schema 9 (query_index with its key declared last) holding
    /// index rows: its check passes (the known false positive is verified by a query, not
    /// believed), and opening it migrates the table with every row kept.
    @Test func aSchema8DatabaseWithIndexRowsChecksAndMigrates() throws {
        let (database, connection) = try SQLiteConnection.atSchema(8, in: dir.path)
        try connection.execute("INSERT INTO nodes(path, kind, value) VALUES ('fav/f1/createdAt', \(LeafKind.int.rawValue), 5)")
        try connection.execute("INSERT INTO query_index(location, spec, rank, value, key_order, child_key) VALUES ('fav', 'createdAt', 3, 5, '1f1', 'f1')")
        try connection.execute("INSERT INTO query_index_built(location, spec) VALUES ('fav', 'createdAt')")
        connection.close()

        #expect(try DatabaseFile.verify(databaseAt: database) == 8)
        let copy = out.path + "/old.sqlite"
        try DatabaseFile.backup(databaseAt: database, to: copy)

        let store = try SQLiteTreeStore(directory: dir.path)
        #expect(try store.integrityCheck() == "ok")
        store.close()
        #expect(try Self.rows(database, "PRAGMA user_version") == Int64(Schema.currentVersion))
        #expect(try Self.rows(database, "SELECT count(*) FROM query_index WHERE child_key = 'f1' AND rank = 3 AND value = 5 AND key_order = '1f1'") == 1)
    }

    /// Only that false positive is set aside: any other line, or another column or table,
    /// keeps the report.
    @Test func onlyTheKnownFalsePositiveIsRecognised() {
        #expect(IntegrityReport.falsePositiveColumns(["NULL value in query_index.rank", "NULL value in query_index.key_order"]) == ["rank", "key_order"])
        #expect(IntegrityReport.falsePositiveColumns(["NULL value in query_index.rank", "row 3 missing from index query_index_order"]).isEmpty)
        #expect(IntegrityReport.falsePositiveColumns(["NULL value in query_index.child_key"]).isEmpty)
        #expect(IntegrityReport.falsePositiveColumns(["NULL value in nodes.kind"]).isEmpty)
        #expect(IntegrityReport.falsePositiveColumns(["*** in database main ***", "Page 4 is never used"]).isEmpty)
    }
}
