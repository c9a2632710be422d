import Dispatch
import HearthJSON
import HearthStore
import HearthTesting
import Testing
@testable import HearthPostgres

/// Namespaces on PostgreSQL: each is a schema of its own, so its writes take
/// its own ordering lock and its own change numbering; a write to one namespace never
/// waits on another's.
@Suite(.enabled(if: PostgresTests.enabled)) struct PostgresNamespaceTests {
    static let factory = PostgresEngineFactory()

    static func location(_ url: String, _ name: String) -> String {
        factory.location(ofNamespace: name, beside: .postgres(url: url)).address
    }

    @Test func aNamespaceIsASchemaWithItsOwnTreeAndNumbering() throws {
        let url = try PostgresCluster.shared().makeDatabase()
        let main = try PostgresEngine(url: url)
        defer { main.close() }
        let other = try PostgresEngine(url: Self.location(url, "env-a"))
        defer { other.close() }
        for index in 1...3 { try main.writeSync(.set(WriteEntry(path: try DataPath(string: "/x"), value: .int(Int64(index)))), check: nil) }
        let change = try other.writeSync(.set(WriteEntry(path: try DataPath(string: "/x"), value: "a")), check: nil)
        #expect(change.seq == 1, "its own change numbering")
        #expect(try main.readSync { try $0.value(at: DataPath(string: "/x")) } == .int(3))
        #expect(try other.readSync { try $0.value(at: DataPath(string: "/x")) } == "a")
        let schemas = try PGConnection(url: url).query("SELECT count(*) FROM pg_namespace WHERE nspname = 'hearth_ns_env_a'")
        #expect(schemas.int64(0, 0) == 1, "its schema")
    }

    /// With the default namespace's ordering lock held by another session, a write to
    /// another namespace commits at once.
    @Test func aWriteDoesNotWaitOnAnotherNamespacesLock() throws {
        let url = try PostgresCluster.shared().makeDatabase()
        let main = try PostgresEngine(url: url)
        defer { main.close() }
        let other = try PostgresEngine(url: Self.location(url, "env-b"))
        defer { other.close() }
        let holder = try PGConnection(url: url)
        try holder.execute("BEGIN")
        _ = try holder.query("SELECT value FROM hearth_meta WHERE key = 'last_seq' FOR UPDATE")
        let committed = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            _ = try? other.writeSync(.set(WriteEntry(path: try! DataPath(string: "/y"), value: 1)), check: nil)
            committed.signal()
        }
        #expect(committed.wait(timeout: .now() + .seconds(60)) == .success, "the write to env-b waited on the default's lock")
        // The default namespace's own writes do wait for it, until it is released.
        let blocked = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            _ = try? main.writeSync(.set(WriteEntry(path: try! DataPath(string: "/y"), value: 2)), check: nil)
            blocked.signal()
        }
        try holder.execute("ROLLBACK")
        #expect(blocked.wait(timeout: .now() + .seconds(60)) == .success)
        #expect(try other.readSync { try $0.value(at: DataPath(string: "/y")) } == .int(1))
    }
}
