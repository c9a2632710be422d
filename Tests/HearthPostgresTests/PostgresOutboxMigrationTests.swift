import HearthJSON
import HearthStore
import HearthTesting
import Testing
@testable import HearthPostgres

/// Schema 6: a database of an earlier release gains the triggers' outbox when
/// a node opens it, keeping its data and change numbers.
@Suite(.enabled(if: PostgresTests.enabled)) struct PostgresOutboxMigrationTests {
    @Test func aSchema5DatabaseGainsTheOutboxAndKeepsItsData() throws {
        let url = try PostgresCluster.shared().makeDatabase()
        let connection = try PGConnection(url: url)
        try connection.execute("BEGIN")
        for migration in PostgresSchema.migrations.prefix(5) { try connection.execute(migration) }
        _ = try connection.query("INSERT INTO hearth_meta(key, value) VALUES ('schema_version', 5)")
        _ = try connection.query("INSERT INTO nodes(path, kind, ival) VALUES ('a', \(LeafKind.int.rawValue), 5)")
        _ = try connection.query("INSERT INTO changes(seq, path, kind, data, at) VALUES (1, 'a', 'put', '5', 1)")
        _ = try connection.query("UPDATE hearth_meta SET value = 1 WHERE key = 'last_seq'")
        try connection.execute("COMMIT")

        let engine = try PostgresEngine(url: url)
        defer { engine.close() }
        #expect(PostgresSchema.currentVersion == 12)
        #expect(try connection.query("SELECT value FROM hearth_meta WHERE key = 'schema_version'").int64(0, 0) == Int64(PostgresSchema.currentVersion))
        #expect(try engine.readSync { try $0.value(at: .root) } == ["a": 5])
        let outcome = try engine.writeSync(.set(WriteEntry(path: try DataPath(string: "/b"), value: 1)), check: nil) { _, _ in
            [OutboxEvent(trigger: "t", payload: [1, 2])]
        }
        #expect(outcome.seq == 2, "change numbers go on from the migrated database's")
        #expect(try engine.triggerOutbox.pending(trigger: "t", now: 0, limit: 10).map(\.seq) == [2])
        #expect(try engine.triggerOutbox.lease(trigger: "t", seconds: 10))
    }
}
