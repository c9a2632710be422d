import Foundation
import HearthJSON
import Testing
@testable import HearthSQLite
@testable import HearthStore

/// Schema 12: `nodes` without a rowid. A database of an earlier version opens
/// with every leaf kept as it was stored, and the rebuilt table passes the integrity check
/// of the SQLite it runs on.
@Suite struct NodesWithoutRowidMigrationTests {
    let dir = TemporaryDirectory()

    @Test func aSchema11DatabaseKeepsEveryLeafAndItsKind() throws {
        let (database, connection) = try SQLiteConnection.atSchema(11, in: dir.path)
        let rows: [(String, LeafKind, String)] = [
            ("u/a/int", .int, "5"), ("u/a/double", .double, "2.5"), ("u/a/bool", .bool, "1"),
            ("u/a/text", .string, "'Brandenburger Tor'"), ("u/b/n", .int, "-7"),
        ]
        for (path, kind, value) in rows {
            try connection.execute("INSERT INTO nodes(path, kind, value) VALUES ('\(path)', \(kind.rawValue), \(value))")
        }
        try connection.execute("INSERT INTO changes(path, kind, data, at) VALUES ('u', 'put', '{}', 1)")
        #expect(try connection.scalarText("SELECT sql FROM sqlite_master WHERE name = 'nodes'")?.contains("WITHOUT ROWID") == false)
        connection.close()

        let store = try SQLiteTreeStore(directory: dir.path)
        defer { store.close() }
        #expect(try IndexedBackupTests.rows(database, "PRAGMA user_version") == Int64(Schema.currentVersion))
        let shape = try store.onWriter { try $0.scalarText("SELECT sql FROM sqlite_master WHERE name = 'nodes'") }
        #expect(shape?.contains("WITHOUT ROWID") == true)
        #expect(try store.onWriter { try $0.scalarInt("SELECT count(*) FROM sqlite_master WHERE name = 'nodes_12'") } == 0)
        #expect(try store.readSync { try $0.value(at: path("u")) } == obj([
            "a": obj(["int": .int(5), "double": .double(2.5), "bool": .bool(true), "text": .string("Brandenburger Tor")]),
            "b": obj(["n": .int(-7)]),
        ]))
        #expect(try store.integrityCheck() == "ok")
        // Writes go on, the change log after the migrated one.
        let outcome = try store.put("u/a/int", .int(6))
        #expect(outcome.seq == 2)
        try store.put("u/b", nil)
        #expect(try store.get("u") == obj(["a": obj(["int": .int(6), "double": .double(2.5), "bool": .bool(true), "text": .string("Brandenburger Tor")])]))
        #expect(try store.integrityCheck() == "ok")
    }
}
