#if canImport(Glibc)
import Glibc
#endif
import HearthStore
import HearthTesting
import Testing
@testable import HearthPostgres

/// The libpq layer against a real server (`PostgresCluster`), each test on a fresh database.
@Suite(.enabled(if: PostgresTests.enabled)) struct PGConnectionTests {
    struct Thrown: Error, Equatable { var tag: Int }

    static func connect() throws -> PGConnection {
        try PGConnection(url: PostgresCluster.shared().makeDatabase())
    }

    /// The engine failure `body` throws, nil when it throws nothing (or something else).
    static func failure(_ body: () throws -> Void) -> EngineFailure? {
        do {
            try body()
            return nil
        } catch StoreError.engine(let failure) {
            return failure
        } catch {
            return nil
        }
    }

    /// An exchange the server does not answer within the connection's exchange timeout
    /// (here a statement that sleeps past it, as a silent server would be) fails as
    /// `.unavailable` instead of waiting, the connection shows broken, and `reset()` makes
    /// it usable again. Statements, BEGIN and COMMIT all go through the same wait.
    @Test func anExchangeNotAnsweredInTimeGivesUpTheConnection() throws {
        let db = try PGConnection(url: PostgresCluster.shared().makeDatabase(), exchangeTimeoutMilliseconds: 300)
        #expect(try db.query("SELECT 1").int64(0, 0) == 1)
        let slow = Self.failure { _ = try db.query("SELECT pg_sleep($1)", [.int(30)]) }
        #expect(slow?.kind == .unavailable)
        #expect(slow?.message.contains("did not answer within 300 ms") == true, "\(String(describing: slow))")
        #expect(db.isBroken)
        db.reset()
        #expect(try db.query("SELECT 2").int64(0, 0) == 2)
        #expect(Self.failure { try db.execute("SELECT pg_sleep(30)") }?.kind == .unavailable, "the simple protocol too")
        db.reset()
        try db.execute("BEGIN; SELECT 1; COMMIT")
        #expect(PGConnection.exchangeTimeoutMilliseconds + PGConnection.connectTimeoutSeconds * 1_000 <= 10_000,
                "a write that cannot commit is answered within 10 s")
    }

    /// Several statements in one exchange: each one's result in order, each with its own
    /// parameters; a failed one ends the answers (the server runs none after it) and says
    /// so while the connection is up; a wait that runs out ends them where they stopped,
    /// not as the server's refusal.
    @Test func statementsSentTogetherAnswerEachInOneExchange() throws {
        let db = try PGConnection(url: PostgresCluster.shared().makeDatabase(), exchangeTimeoutMilliseconds: 300)
        try db.execute("CREATE TABLE t (v int)")
        let before = db.exchanges
        let all = db.runPipelined([.init(sql: "BEGIN"), .init(sql: "INSERT INTO t VALUES ($1)", params: [.int(1)]),
                                   .init(sql: "SELECT $1::int, $2::text", params: [.int(2), .text("two'; --")]), .init(sql: "COMMIT")])
        #expect(db.exchanges - before == 1)
        #expect(all.failure.map { "\($0)" } == nil && all.results.count == 4)
        #expect(all.results[2].int64(0, 0) == 2 && all.results[2].text(0, 1) == "two'; --")
        #expect(all.results[3].commandStatus == "COMMIT")
        let refused = db.runPipelined(["BEGIN", "INSERT INTO t VALUES (3)", "SELECT 1 / 0", "INSERT INTO t VALUES (4)", "COMMIT"].map { .init(sql: $0) })
        #expect(refused.results.count == 2)
        #expect(refused.refusedByServer)
        guard case .engine(let failure)? = refused.failure else { Issue.record("no failure: \(String(describing: refused.failure))"); return }
        #expect(failure.code == "22012")
        #expect(db.isInTransaction, "the COMMIT after the failed statement did not run")
        try db.execute("ROLLBACK")
        #expect(try db.query("SELECT array_agg(v)::text FROM t").text(0, 0) == "{1}")
        let slow = db.runPipelined(["SELECT 1", "SELECT pg_sleep(30)", "SELECT 2"].map { .init(sql: $0) })
        #expect(slow.results.count < 3 && !slow.refusedByServer)
        #expect((slow.failure.flatMap { error -> EngineFailure? in if case .engine(let f) = error { return f }; return nil })?.kind == .unavailable)
        #expect(db.isBroken)
        // Given up in the middle of a pipeline, the session is reset out of pipeline mode:
        // every kind of statement works again.
        db.reset()
        try db.execute("SELECT 1; SELECT 2")
        #expect(try db.query("SELECT $1::int", [.int(3)]).int64(0, 0) == 3)
        #expect(db.runPipelined([.init(sql: "SELECT 4")]).results.map { $0.int64(0, 0) } == [4])
    }

    /// A pipeline's statements are prepared on the session the first time, inside that same
    /// exchange, and run by name after; one the session lost (DEALLOCATE) fails that
    /// exchange, is forgotten, and is prepared again in the next.
    @Test func statementsSentTogetherArePreparedOnceInTheirOwnExchange() throws {
        let db = try Self.connect()
        let statements: [PGConnection.Statement] = [.init(sql: "SELECT $1::int + 1", params: [.int(1)]), .init(sql: "SELECT 'x'")]
        var before = db.exchanges
        #expect(db.runPipelined(statements).results.map { $0.text(0, 0) } == ["2", "x"])
        #expect(db.exchanges - before == 1 && db.preparedCount == 2)
        before = db.exchanges
        #expect(db.runPipelined(statements + [.init(sql: "SELECT $1::int + 1", params: [.int(5)])]).results.map { $0.text(0, 0) } == ["2", "x", "6"])
        #expect(db.exchanges - before == 1 && db.preparedCount == 2, "the same texts run by name")
        try db.execute("DEALLOCATE ALL")
        let lost = db.runPipelined(statements)
        guard case .engine(let failure)? = lost.failure else { Issue.record("no failure: \(String(describing: lost.failure))"); return }
        #expect(failure.code == "26000" && lost.refusedByServer)
        #expect(db.preparedCount == 0)
        #expect(db.runPipelined(statements).results.map { $0.text(0, 0) } == ["2", "x"])
        #expect(db.preparedCount == 2)
    }

    /// The exchange timeout bounds the wait for the server's next bytes, not the whole
    /// answer: rows that keep arriving (here 15 of 200 KB, one every 100 ms: 1.5 s in all)
    /// are read whole under a 1 s timeout. Work known to be long (a migration) waits inside
    /// `allowingLongExchanges`, and the usual timeout holds again after it.
    @Test func anAnswerThatKeepsArrivingAndLongWorkAreWaitedFor() throws {
        let db = try PGConnection(url: PostgresCluster.shared().makeDatabase(), exchangeTimeoutMilliseconds: 1_000)
        let rows = try db.query("SELECT repeat('x', 200000), pg_sleep(0.1) FROM generate_series(1, 15)")
        #expect(rows.rowCount == 15 && rows.text(14, 0).utf8.count == 200_000)
        try db.allowingLongExchanges { () throws(StoreError) in _ = try db.query("SELECT pg_sleep(1.5)") }
        #expect(Self.failure { _ = try db.query("SELECT pg_sleep(30)") }?.kind == .unavailable)
    }

    @Test func everyKindOfParameterRoundTrips() throws {
        let db = try Self.connect()
        try db.execute("CREATE TABLE t (s text, i bigint, d double precision, b boolean, x bytea, n text)")
        let texts = ["", "plain", "ünïcödé 日本語 🔥 e\u{301}", "quote ' double \" back \\ dollar $1 brace {}", "tab\tnewline\n"]
        let ints: [Int64] = [0, -1, 1, .min, .max]
        let doubles: [Double] = [0.1, 1e300, -0.0, .leastNonzeroMagnitude, -1.7976931348623157e308, 123456789.123456789, 1.0 / 3.0]
        let blobs: [[UInt8]] = [[], [0], [0, 0, 1, 0, 255, 0x7f, 0x80, 0], Array(0...255)]
        var rows: [(String, Int64, Double, Bool, [UInt8])] = []
        for index in 0..<max(texts.count, ints.count, doubles.count, blobs.count) {
            rows.append((texts[index % texts.count], ints[index % ints.count], doubles[index % doubles.count],
                         index % 2 == 0, blobs[index % blobs.count]))
        }
        for (index, row) in rows.enumerated() {
            let inserted = try db.query("INSERT INTO t VALUES ($1, $2, $3, $4, $5, $6)",
                                        [.text(row.0), .int(row.1), .double(row.2), .bool(row.3), .bytes(row.4), index == 0 ? .null : .text("x")])
            #expect(inserted.affectedRows == 1)
        }
        let result = try db.query("SELECT s, i, d, b, x, n FROM t")
        #expect(result.rowCount == rows.count)
        #expect(result.columnCount == 6)
        for (index, row) in rows.enumerated() {
            #expect(result.text(index, 0) == row.0)
            #expect(result.int64(index, 1) == row.1)
            #expect(result.double(index, 2).bitPattern == row.2.bitPattern, "\(row.2) came back as \(result.text(index, 2))")
            #expect(result.bool(index, 3) == row.3)
            #expect(result.bytes(index, 4) == row.4)
            #expect(result.isNull(index, 5) == (index == 0))
            #expect(!result.isNull(index, 0))
        }
        // Parameters whose types the server infers from a cast, not from a column.
        let echo = try db.query("SELECT $1::text, $2::bigint, $3::float8, $4::boolean, $5::bytea, $6::text IS NULL",
                                [.text("é"), .int(.min), .double(-0.0), .bool(false), .bytes([0, 0]), .null])
        #expect(echo.text(0, 0) == "é" && echo.int64(0, 1) == .min && echo.double(0, 2).sign == .minus)
        #expect(!echo.bool(0, 3) && echo.bytes(0, 4) == [0, 0] && echo.bool(0, 5))
    }

    @Test func valuesPostgreSQLTextCannotHoldAreRefused() throws {
        let db = try Self.connect()
        let nul = Self.failure { _ = try db.query("SELECT $1::text", [.text("a\u{0}b")]) }
        #expect(nul?.code == "22021")
        #expect(Self.failure { _ = try db.query("SELECT $1::float8", [.double(.infinity)]) }?.kind == .other)
        #expect(Self.failure { _ = try db.query("SELECT $1::float8", [.double(.nan)]) }?.kind == .other)
        #expect(try db.query("SELECT 1").int64(0, 0) == 1)  // the connection is still usable
    }

    @Test func aPreparedStatementGivesTheSameAnswersWhenReused() throws {
        let db = try Self.connect()
        try db.execute("CREATE TABLE kv (k text PRIMARY KEY, v bigint); INSERT INTO kv VALUES ('a', 1), ('b', 2), ('c', 3)")
        let sql = "SELECT k, v FROM kv WHERE v >= $1 ORDER BY k"
        var answers: [[String]] = []
        for _ in 0..<3 {
            let result = try db.query(sql, [.int(2)])
            answers.append((0..<result.rowCount).map { "\(result.text($0, 0))=\(result.int64($0, 1))" })
        }
        #expect(answers == Array(repeating: ["b=2", "c=3"], count: 3))
        #expect(try db.query(sql, [.int(3)]).rowCount == 1)  // same statement, other parameters
        let prepared = try db.query("SELECT count(*) FROM pg_prepared_statements WHERE statement = $1", [.text(sql)])
        #expect(prepared.int64(0, 0) == 1)
    }

    @Test func aUniqueViolationNamesItsConstraintButNotTheValue() throws {
        let db = try Self.connect()
        try db.execute("CREATE TABLE users (uid text PRIMARY KEY, email text UNIQUE)")
        let insert = "INSERT INTO users VALUES ($1, $2)"
        _ = try db.query(insert, [.text("u1"), .text("alice@example.com")])
        let email = Self.failure { _ = try db.query(insert, [.text("u2"), .text("alice@example.com")]) }
        #expect(email?.kind == .constraint)
        #expect(email?.code == "23505")
        #expect(email?.engine == "postgres")
        #expect(email?.postgresConstraint == "users_email_key")
        #expect(email.map { !$0.message.contains("alice") } == true)
        let key = Self.failure { _ = try db.query(insert, [.text("u1"), .text("bob@example.com")]) }
        #expect(key?.kind == .constraint)
        #expect(key?.postgresConstraint == "users_pkey")
        #expect(try db.query("SELECT count(*) FROM users").int64(0, 0) == 1)
    }

    @Test func otherFailuresAreOtherAndKeepDataOutOfTheMessage() throws {
        let db = try Self.connect()
        let syntax = Self.failure { try db.execute("SELEKT 1") }
        #expect(syntax?.kind == .other)
        #expect(syntax?.code == "42601")
        let preparedSyntax = Self.failure { _ = try db.query("SELECT FROM WHERE $1", [.int(1)]) }
        #expect(preparedSyntax?.code == "42601")
        let data = Self.failure { _ = try db.query("SELECT $1::bigint", [.text("secret-value")]) }
        #expect(data?.code == "22P02")
        #expect(data?.kind == .other)
        #expect(data.map { !$0.message.contains("secret") && $0.message.contains("bigint") } == true, "\(String(describing: data))")
        #expect(PGFailure.kind(sqlstate: "53100") == .full)
        #expect(PGFailure.kind(sqlstate: "40P01") == .conflict)
        #expect(PGFailure.kind(sqlstate: "57014") == .busy)
        #expect(PGFailure.kind(sqlstate: "08006") == .unavailable)
        #expect(PGFailure.kind(sqlstate: "57P01") == .unavailable)
    }

    /// Both transactions read the row, one updates it and commits, then the other's write
    /// must fail: running it again is safe.
    @Test func aSerializationFailureIsAConflict() throws {
        let url = try PostgresCluster.shared().makeDatabase()
        let a = try PGConnection(url: url), b = try PGConnection(url: url)
        try a.execute("CREATE TABLE counter (id int PRIMARY KEY, n bigint); INSERT INTO counter VALUES (1, 0), (2, 0)")
        let sameRow = Self.failure {
            try b.transaction(.serializable) {
                _ = try b.query("SELECT n FROM counter WHERE id = 1")
                try a.transaction(.serializable) {
                    _ = try a.query("SELECT n FROM counter WHERE id = 1")
                    _ = try a.query("UPDATE counter SET n = n + 1 WHERE id = 1")
                }
                _ = try b.query("UPDATE counter SET n = n + 1 WHERE id = 1")
            }
        }
        #expect(sameRow?.kind == .conflict)
        #expect(sameRow?.code == "40001")
        #expect(!b.isInTransaction)
        // Write skew: each reads both rows and writes a different one; SSI refuses the second.
        let skew = Self.failure {
            try b.transaction(.serializable) {
                _ = try b.query("SELECT sum(n) FROM counter")
                try a.transaction(.serializable) {
                    _ = try a.query("SELECT sum(n) FROM counter")
                    _ = try a.query("UPDATE counter SET n = n + 1 WHERE id = 1")
                }
                _ = try b.query("UPDATE counter SET n = n + 1 WHERE id = 2")
            }
        }
        #expect(skew?.kind == .conflict)
        #expect(skew?.code == "40001")
        let rows = try a.query("SELECT n FROM counter ORDER BY id")
        #expect(rows.int64(0, 0) == 2 && rows.int64(1, 0) == 0)
    }

    @Test func aLockTimeoutIsBusy() throws {
        let url = try PostgresCluster.shared().makeDatabase()
        let holder = try PGConnection(url: url), waiter = try PGConnection(url: url)
        try holder.execute("CREATE TABLE r (id int PRIMARY KEY, v int); INSERT INTO r VALUES (1, 0)")
        try waiter.execute("SET lock_timeout = '50ms'")
        var busy: EngineFailure?
        try holder.transaction {
            _ = try holder.query("SELECT v FROM r WHERE id = $1 FOR UPDATE", [.int(1)])
            busy = Self.failure { _ = try waiter.query("UPDATE r SET v = 1 WHERE id = $1", [.int(1)]) }
        }
        #expect(busy?.kind == .busy)
        #expect(busy?.code == "55P03")
        _ = try waiter.query("UPDATE r SET v = 1 WHERE id = $1", [.int(1)])  // free once the holder committed
    }

    @Test func aTransactionRollsBackWhenItsBodyThrows() throws {
        let db = try Self.connect()
        try db.execute("CREATE TABLE t (v int)")
        #expect(throws: Thrown(tag: 7)) {
            try db.transaction {
                _ = try db.query("INSERT INTO t VALUES ($1)", [.int(1)])
                throw Thrown(tag: 7)
            }
        }
        #expect(!db.isInTransaction)
        #expect(try db.query("SELECT count(*) FROM t").int64(0, 0) == 0)
        let value = try db.transaction(.repeatableRead) {
            _ = try db.query("INSERT INTO t VALUES ($1)", [.int(2)])
            return 42
        }
        #expect(value == 42)
        #expect(try db.query("SELECT count(*) FROM t").int64(0, 0) == 1)
        // A read-only transaction refuses writes (25006).
        let readOnly = Self.failure { try db.transaction(.repeatableRead, readOnly: true) { _ = try db.query("INSERT INTO t VALUES (3)") } }
        #expect(readOnly?.code == "25006")
        // A body that swallows a failed statement does not get a silent ROLLBACK for its COMMIT.
        let swallowed = Self.failure {
            try db.transaction {
                _ = try db.query("INSERT INTO t VALUES ($1)", [.int(4)])
                _ = try? db.execute("SELEKT")
            }
        }
        #expect(swallowed?.code == "25P02")
        // Transactions do not nest.
        let nested = Self.failure { try db.transaction { try db.transaction {} } }
        #expect(nested?.code == "25001")
        #expect(try db.query("SELECT count(*) FROM t").int64(0, 0) == 1)
    }

    @Test func aNotificationArrivesOnlyAfterItsTransactionCommits() throws {
        let url = try PostgresCluster.shared().makeDatabase()
        let listener = try PGConnection(url: url), sender = try PGConnection(url: url)
        try listener.listen("hearth_test")
        #expect(listener.socket >= 0)
        try sender.transaction {
            try sender.notify(channel: "hearth_test", payload: "42 ünï")
            #expect(try listener.waitForNotification(timeoutMilliseconds: 100) == [])
        }
        #expect(try listener.waitForNotification(timeoutMilliseconds: 30_000) == ["42 ünï"])
        #expect(try listener.consumeNotifications() == [])
        // Notifications that arrived while the listener ran a statement are not lost.
        try sender.notify(channel: "hearth_test", payload: "a")
        try sender.notify(channel: "hearth_test", payload: "b")
        var heard: [String] = []
        while heard.count < 2 {
            let more = try listener.waitForNotification(timeoutMilliseconds: 30_000)
            #expect(!more.isEmpty)
            if more.isEmpty { break }
            heard += more
            _ = try listener.query("SELECT 1")
        }
        #expect(heard == ["a", "b"])
        #expect(Self.failure { try listener.listen("Bad-Name") }?.kind == .other)
        #expect(Self.failure { try listener.listen("1abc") }?.kind == .other)
        #expect(Self.failure { try sender.notify(channel: "x; DROP TABLE t", payload: "") }?.kind == .other)
    }

    @Test func aClosedPortIsUnavailable() throws {
        // A bound socket that does not listen refuses connections, and nobody else gets the port.
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #expect(fd >= 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        #expect(bound)
        let port = UInt16(bigEndian: address.sin_port)
        let failure = Self.failure { _ = try PGConnection(url: "postgresql://hearth:hearth@127.0.0.1:\(port)/hearth?connect_timeout=10") }
        #expect(failure?.kind == .unavailable)
        #expect(failure?.code == "connection")
        #expect(failure?.operation == "connect")
    }

    @Test func aTerminatedSessionIsUnavailableUntilReset() throws {
        let url = try PostgresCluster.shared().makeDatabase()
        let victim = try PGConnection(url: url), killer = try PGConnection(url: url)
        try victim.listen("hearth_reset")
        let sql = "SELECT pg_backend_pid() + $1"
        let pid = try victim.query(sql, [.int(0)]).int64(0, 0)
        // Waits (up to 10 s) for the backend to be gone: no race with the next statement.
        #expect(try killer.query("SELECT pg_terminate_backend($1::int, 10000)", [.int(pid)]).bool(0, 0))
        let lost = Self.failure { _ = try victim.query(sql, [.int(0)]) }
        #expect(lost?.kind == .unavailable)
        #expect(victim.isBroken)
        victim.reset()
        #expect(!victim.isBroken)
        #expect(try victim.query(sql, [.int(0)]).int64(0, 0) != pid)  // prepared again on the new session
        try killer.notify(channel: "hearth_reset", payload: "again")  // LISTEN was restored
        #expect(try victim.waitForNotification(timeoutMilliseconds: 30_000) == ["again"])
    }

    /// A session the server ended while it sat idle (a restart, a failover, an operator)
    /// shows as broken before a statement is sent on it, so the engine reconnects first
    /// instead of failing the next request (the first one after every outage did).
    @Test func aSessionEndedWhileIdleShowsAsBrokenBeforeTheNextStatement() throws {
        let url = try PostgresCluster.shared().makeDatabase()
        let victim = try PGConnection(url: url), killer = try PGConnection(url: url)
        let pid = try victim.query("SELECT pg_backend_pid()").int64(0, 0)
        #expect(try killer.query("SELECT pg_terminate_backend($1::int, 10000)", [.int(pid)]).bool(0, 0))
        #expect(!victim.isBroken, "libpq has not looked yet")
        #expect(victim.isBrokenNow)
        #expect(!victim.errorMessage.isEmpty)
        victim.reset()
        #expect(!victim.isBrokenNow)
        #expect(try victim.query("SELECT pg_backend_pid()").int64(0, 0) != pid)
    }

    /// Past `preparedLimit` distinct statements a session stops preparing new ones and
    /// runs them unprepared, with the same answers.
    @Test func pastThePreparedLimitStatementsRunUnprepared() throws {
        let db = try Self.connect()
        let count = PGConnection.preparedLimit + 10
        for i in 0..<count {
            #expect(try db.query("SELECT $1::bigint + \(i)", [.int(1)]).int64(0, 0) == Int64(i + 1))
        }
        #expect(db.preparedCount == PGConnection.preparedLimit)
        // Prepared ones and unprepared ones, again.
        #expect(try db.query("SELECT $1::bigint + 0", [.int(5)]).int64(0, 0) == 5)
        #expect(try db.query("SELECT $1::bigint + \(count - 1)", [.int(5)]).int64(0, 0) == Int64(count + 4))
        #expect(db.preparedCount == PGConnection.preparedLimit)
        // Statements sent together: a prepared one by name, new ones unprepared.
        let together = db.runPipelined([.init(sql: "SELECT $1::bigint + 0", params: [.int(7)]), .init(sql: "SELECT $1::bigint + \(count)", params: [.int(7)]),
                                        .init(sql: "SELECT $1::bigint + \(count)", params: [.int(8)])])
        #expect(together.results.map { $0.int64(0, 0) } == [7, Int64(count + 7), Int64(count + 8)])
        #expect(db.preparedCount == PGConnection.preparedLimit)
    }

    /// The libpq settings Hearth adds unless the URL names them (a vanished server is
    /// noticed in seconds), in both forms of a connection string.
    @Test func connectionDefaultsAreAddedUnlessNamed() {
        let all = PGConnection.connectionDefaults.map { "\($0.key)=\($0.value)" }
        #expect(PGConnection.withDefaults("postgres://u:p@h:5432/db") == "postgres://u:p@h:5432/db?" + all.joined(separator: "&"))
        let named = PGConnection.withDefaults("postgresql://h/db?sslmode=require&connect_timeout=3")
        #expect(named.hasPrefix("postgresql://h/db?sslmode=require&connect_timeout=3&tcp_user_timeout=30000&"))
        #expect(named.components(separatedBy: "connect_timeout=").count == 2, "the URL's own value is kept, not doubled: \(named)")
        #expect(PGConnection.withDefaults("host=h dbname=db keepalives=0") == "host=h dbname=db keepalives=0 "
                + all.filter { !$0.hasPrefix("keepalives=") }.joined(separator: " "))
    }

    /// A session left idle inside a transaction (a node that vanished mid-transaction) is
    /// ended by the server, so the locks it held are released: another session waiting for
    /// one gets it. The wait is on the lock, bounded by lock_timeout.
    @Test func aSessionIdleInATransactionIsEndedAndItsLocksReleased() throws {
        let url = try PostgresCluster.shared().makeDatabase()
        let stuck = try PGConnection(url: url), waiter = try PGConnection(url: url)
        #expect(try stuck.query("SHOW idle_in_transaction_session_timeout").text(0, 0) == "\(PGConnection.idleInTransactionTimeoutMilliseconds / 1000)s")
        // The server's keepalives toward this (TCP) session.
        let idle = try stuck.query("SHOW tcp_keepalives_idle").text(0, 0)
        #expect(idle == "\(PGConnection.serverKeepalives.idle)", "\(idle)")
        #expect(try stuck.query("SHOW tcp_keepalives_count").text(0, 0) == "\(PGConnection.serverKeepalives.count)")
        try stuck.execute("CREATE TABLE t (id int PRIMARY KEY); INSERT INTO t VALUES (1)")
        try stuck.execute("SET idle_in_transaction_session_timeout = 300")  // shorter here; the same mechanism
        try stuck.execute("BEGIN")
        _ = try stuck.query("SELECT id FROM t WHERE id = 1 FOR UPDATE")
        try waiter.execute("SET lock_timeout = 30000")
        #expect(try waiter.query("SELECT id FROM t WHERE id = 1 FOR UPDATE").rowCount == 1)
        #expect(Self.failure { _ = try stuck.query("SELECT 1") }?.kind == .unavailable)
    }

    @Test func theHearthRoleIsNotASuperuser() throws {
        let db = try Self.connect()
        let role = try db.query("SELECT rolsuper, rolcreatedb, current_user FROM pg_roles WHERE rolname = current_user")
        #expect(role.rowCount == 1)
        #expect(role.bool(0, 0) == false)
        #expect(role.bool(0, 1) == false)
        #expect(role.text(0, 2) == "hearth")
        #expect(try db.query("SELECT datdba::regrole::text FROM pg_database WHERE datname = current_database()").text(0, 0) == "hearth")
    }
}
