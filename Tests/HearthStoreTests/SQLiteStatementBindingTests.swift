import CSQLite
import Testing
@testable import HearthSQLite
@testable import HearthStore

/// `SQLiteStatement.run` binds text and blobs where they are (`SQLITE_STATIC`) instead of
/// having SQLite copy them: every kind of value still arrives whole, and no
/// binding outlives the call that lent its bytes.
@Suite struct SQLiteStatementBindingTests {
    let dir = TemporaryDirectory()

    func table() throws -> SQLiteConnection {
        let connection = try SQLiteConnection(path: dir.path + "/b.sqlite", mode: .readWriteCreate)
        try connection.execute("CREATE TABLE t (k INTEGER PRIMARY KEY, a, b, c, d, e, f)")
        return connection
    }

    /// The parameters as SQLite would run them now (`sqlite3_expanded_sql`): NULL for an
    /// unbound one.
    static func expanded(_ statement: SQLiteStatement) -> String {
        guard let text = sqlite3_expanded_sql(statement.handle) else { return "" }
        defer { sqlite3_free(text) }
        return String(cString: text)
    }

    @Test func everyKindOfValueArrivesWhole() throws {
        let connection = try table()
        let insert = try connection.statement("INSERT INTO t VALUES (?, ?, ?, ?, ?, ?, ?)")
        let long = String(repeating: "é/", count: 5_000)  // 15,000 bytes, not a small string
        try insert.run([.integer(1), .text("users/u1/favorites/-Nx/name"), .text(""), .text(long), .blob([0, 1, 255]), .blob([]),
                        .real(52.52)])
        try insert.run([.integer(2), .null, .text("ü"), .integer(-7), .text(String(repeating: "x", count: 15)), .null, .text("end")])
        let select = try connection.statement("SELECT a, b, c, typeof(d), length(e), f FROM t ORDER BY k")
        try select.reset()
        #expect(try select.step())
        #expect(select.text(0) == "users/u1/favorites/-Nx/name")
        #expect(select.text(1) == "")
        #expect(select.columnType(1) == SQLITE_TEXT)  // empty text, not NULL
        #expect(select.text(2) == long)
        #expect(select.text(3) == "blob")
        #expect(select.int64(4) == 0)  // the empty blob is a blob of length 0
        #expect(select.double(5) == 52.52)
        #expect(try select.step())
        #expect(select.columnType(0) == SQLITE_NULL)
        #expect(select.text(1) == "ü")
        #expect(select.int64(2) == -7)
        #expect(select.text(3) == "text")
        #expect(select.text(5) == "end")
        #expect(try !select.step())
        try select.reset()
    }

    @Test func noBindingOutlivesTheRun() throws {
        let connection = try table()
        let insert = try connection.statement("INSERT INTO t (k, a, b) VALUES (?, ?, ?)")
        try insert.run([.integer(1), .text("borrowed bytes"), .blob([1, 2, 3])])
        // Cleared, not left pointing at bytes that were only lent for the call.
        #expect(Self.expanded(insert) == "INSERT INTO t (k, a, b) VALUES (NULL, NULL, NULL)")
    }

    @Test func aFailedBindIsAnErrorAndTheStatementStaysUsable() throws {
        let connection = try table()
        let insert = try connection.statement("INSERT INTO t (k, a) VALUES (?, ?)")
        // A third value has no parameter: SQLITE_RANGE at the bind, nothing inserted.
        #expect(throws: StoreError.self) { try insert.run([.integer(1), .text("a"), .text("one too many")]) }
        #expect(try connection.scalarInt("SELECT count(*) FROM t") == 0)
        try insert.run([.integer(2), .text("b")])
        #expect(try connection.scalarText("SELECT a FROM t WHERE k = 2") == "b")
    }
}
