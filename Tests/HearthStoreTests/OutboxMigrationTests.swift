import Foundation
import HearthJSON
import Testing
@testable import HearthSQLite
@testable import HearthStore

/// Schema 10: the triggers' outbox, added to databases of every earlier version
/// without touching their data.
@Suite struct OutboxMigrationTests {
    let dir = TemporaryDirectory()

    /// A database at schema 9 with data opens at the current version, its data and change
    /// log kept, and takes writes with events.
    @Test func aSchema9DatabaseGainsTheOutboxAndKeepsItsData() throws {
        let (database, connection) = try SQLiteConnection.atSchema(9, in: dir.path)
        try connection.execute("INSERT INTO nodes(path, kind, value) VALUES ('a', \(LeafKind.int.rawValue), 5)")
        try connection.execute("INSERT INTO changes(path, kind, data, at) VALUES ('a', 'put', '5', 1)")
        connection.close()
        #expect(try DatabaseFile.verify(databaseAt: database) == 9)

        let store = try SQLiteTreeStore(directory: dir.path)
        defer { store.close() }
        #expect(Schema.currentVersion >= 11)
        #expect(try IndexedBackupTests.rows(database, "PRAGMA user_version") == Int64(Schema.currentVersion))
        #expect(try store.readSync { try $0.value(at: path("a")) } == 5)
        let outcome = try store.writeSync(.set(WriteEntry(path: path("b"), value: 1)), check: nil) { _, _ in
            [OutboxEvent(trigger: "t", payload: [1, 2])]
        }
        #expect(outcome.seq == 2, "the change log goes on from the migrated one")
        #expect(try store.triggerOutbox.pending(trigger: "t", now: 0, limit: 10).map(\.seq) == [2])
        #expect(try store.integrityCheck() == "ok")
    }

    /// What a killed process leaves: the database file and its write-ahead log as they are
    /// while the store is open (no close, no checkpoint), copied elsewhere. An acknowledged
    /// write's events are in it; opening the copy recovers them.
    @Test func acknowledgedEventsAreInTheFilesAnOpenStoreLeaves() throws {
        let store = try SQLiteTreeStore(directory: dir.path)
        defer { store.close() }
        var seqs: [Int64] = []
        for n in 0..<20 {
            seqs.append(try store.writeSync(.set(WriteEntry(path: path("k/\(n)"), value: .int(Int64(n)))), check: nil) { _, _ in
                [OutboxEvent(trigger: "t", payload: [UInt8(n)])]
            }.seq)
        }
        let crashed = TemporaryDirectory()
        let files = FileManager.default
        for suffix in ["", "-wal"] where files.fileExists(atPath: store.databasePath + suffix) {
            try files.copyItem(atPath: store.databasePath + suffix, toPath: crashed.path + "/" + SQLiteTreeStore.fileName + suffix)
        }
        #expect(files.fileExists(atPath: store.databasePath + "-wal"), "the copy is of an open store's files, log included")
        let recovered = try SQLiteTreeStore(directory: crashed.path)
        defer { recovered.close() }
        let records = try recovered.triggerOutbox.pending(trigger: "t", now: 0, limit: 100)
        #expect(records.map(\.seq) == seqs)
        #expect(records.map(\.payload) == (0..<20).map { [UInt8($0)] })
    }
}
