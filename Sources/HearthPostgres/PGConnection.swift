import CLibPQ
import HearthStore
import HearthSystem

/// One connection to PostgreSQL through libpq: statements with text-format
/// parameters and results, transactions, LISTEN/NOTIFY. Every failure is a `StoreError`
/// whose kind comes from the SQLSTATE (`PGFailure`), so the layers above retry a conflict
/// and report a lost server the same way for SQLite and PostgreSQL.
///
/// Not thread-safe, and deliberately not `Sendable`: a `PGconn` runs one exchange at a time,
/// so each connection belongs to one owner that uses it from one queue or thread at a time
/// (the engine's writer queue, a reader slot, the change feed's listener).
///
/// Parameterised statements are prepared once per connection and SQL text (up to
/// `preparedLimit` of them) and run by name after that: one round trip, no re-planning.
final class PGConnection {
    /// Distinct SQL texts prepared per connection; statements past this run unprepared, so
    /// a caller that builds SQL text (it should not) cannot grow the server's memory.
    static let preparedLimit = 256

    /// How long a connection attempt may take, s (libpq's `connect_timeout`).
    static let connectTimeoutSeconds = 4
    /// How long one exchange with the server (a statement, BEGIN, COMMIT) may wait for its
    /// answer, ms. A server that answers nothing in time (a silent partition, a proxy
    /// holding the bytes: TCP's own timeouts see nothing wrong there) costs the connection:
    /// it is shut down and the statement fails as `.unavailable`, so a write is answered
    /// 503 within `exchangeTimeoutMilliseconds` + `connectTimeoutSeconds`, never held
    /// without limit. The wait is for the server's next bytes: an answer that keeps
    /// arriving (a large export's rows) may take longer in all. A statement that computes
    /// longer than this before answering is refused, except inside `allowingLongExchanges`.
    static let exchangeTimeoutMilliseconds = 5_000
    /// The same wait for work known to be long before it answers: a schema migration (which
    /// may copy every row, and waits for another node's migration under the advisory lock).
    static let longExchangeTimeoutMilliseconds: Int32 = 3_600_000

    /// How long the server lets a session sit idle inside a transaction before it ends the
    /// session, ms. Hearth's writes never wait inside a transaction, so only a node that
    /// stopped mid-transaction (paused, frozen; a vanished one is found by the keepalives
    /// below) meets it; it bounds how long such a node can hold the ordering lock that
    /// every node's writes take (`PostgresEngine`). Reader sessions, which hold no locks
    /// and whose snapshots an export or a backup keeps open for long, are exempt.
    static let idleInTransactionTimeoutMilliseconds = 10_000
    /// The server's side of the keepalives (seconds: idle, interval, count): a node that
    /// vanished is noticed by the server too, and its sessions end.
    static let serverKeepalives = (idle: 10, interval: 5, count: 3)

    /// The `PGconn *`; never NULL, finished in `deinit`.
    let handle: OpaquePointer
    /// SQL text → the name it is prepared under on this session.
    private var prepared: [String: String] = [:]
    private var nextStatement = 0
    /// Channels LISTENed to, listened to again after `reset()` (a new session forgets them).
    var channels: Set<String> = []

    /// Connects (blocking) with a libpq connection string (`host=… dbname=…`) or a
    /// `postgres://` / `postgresql://` URL. A server that cannot be reached, or that refuses
    /// the login, throws a failure of kind `.unavailable`.
    /// `idle_in_transaction_session_timeout` of this session, ms (0: none).
    private let idleInTransactionTimeout: Int

    /// This connection's `exchangeTimeoutMilliseconds` (tests shorten it;
    /// `allowingLongExchanges` lengthens it for a while).
    private var exchangeTimeout: Int32

    init(url: String, idleInTransactionTimeout: Int = PGConnection.idleInTransactionTimeoutMilliseconds,
         exchangeTimeoutMilliseconds: Int32 = Int32(PGConnection.exchangeTimeoutMilliseconds)) throws(StoreError) {
        self.idleInTransactionTimeout = idleInTransactionTimeout
        self.exchangeTimeout = exchangeTimeoutMilliseconds
        guard let handle = PQconnectdb(Self.withDefaults(url)) else {
            throw PGFailure.make(code: "connection", kind: .unavailable, message: "libpq could not allocate a connection", operation: "connect")
        }
        guard PQstatus(handle) == CONNECTION_OK else {
            let message = PGFailure.trimmed(PQerrorMessage(handle))
            PQfinish(handle)
            throw PGFailure.make(code: "connection", kind: .unavailable, message: message, operation: "connect")
        }
        self.handle = handle
        // libpq prints notices and warnings to stderr by default; the server's log has them.
        PQsetNoticeProcessor(handle, { _, _ in }, nil)
        try configureSession()  // on failure deinit finishes the connection
    }

    deinit { PQfinish(handle) }

    /// The session settings every connection runs with (applied again after `reset()`):
    /// UTF-8 text, bytea in hex (what `PGResult.bytes` decodes), no NOTICE chatter,
    /// `idleInTransactionTimeoutMilliseconds` and `serverKeepalives`.
    private func configureSession() throws(StoreError) {
        let keepalives = Self.serverKeepalives
        try execute("SET client_encoding = 'UTF8'; SET bytea_output = 'hex'; SET client_min_messages = warning; "
                    + "SET idle_in_transaction_session_timeout = \(idleInTransactionTimeout); "
                    + "SET tcp_keepalives_idle = \(keepalives.idle); SET tcp_keepalives_interval = \(keepalives.interval); "
                    + "SET tcp_keepalives_count = \(keepalives.count)")
    }

    // MARK: Statements

    /// Runs `sql` with the simple query protocol: no parameters, and it may hold several
    /// statements separated by semicolons (a migration). Results are discarded; when a
    /// statement fails, the ones after it do not run.
    func execute(_ sql: String) throws(StoreError) {
        try runDeferred()
        _ = try take(exchange { PQsendQuery(handle, sql) }, operation: "execute")
    }

    /// Runs one statement with parameters `$1`, `$2` … bound from `params` (text format) and
    /// returns its rows (text format). The statement is prepared on first use on this
    /// connection and run by name afterwards.
    func query(_ sql: String, _ params: [PGValue] = []) throws(StoreError) -> PGResult {
        try runDeferred()
        let encoded = try PGParameters(params)
        let name = try statementName(for: sql)
        let raw = exchange {
            encoded.withPointers { values in
                if let name {
                    return PQsendQueryPrepared(handle, name, Int32(params.count), values, nil, nil, 0)
                }
                return PQsendQueryParams(handle, sql, Int32(params.count), nil, values, nil, nil, 0)
            }
        }
        do {
            return try take(raw, operation: "query")
        } catch {
            // A statement the session no longer has (DEALLOCATE, DISCARD), or one whose
            // cached plan no longer fits the tables (0A000 after a migration): forget it, so
            // the caller's retry prepares it afresh.
            if name != nil, case .engine(let failure) = error, Self.meansStatementIsGone(failure.code) {
                prepared[sql] = nil
            }
            throw error
        }
    }

    /// Work that must reach the server before the next statement on this session (the
    /// writer's queued writes, `PostgresTreeWriter`): run once, by the next `query` or
    /// `execute`, before it; its failure is that statement's. Its owner clears it (sets nil)
    /// when it sends the work itself or drops it.
    var beforeNextStatement: (() throws(StoreError) -> Void)?

    private func runDeferred() throws(StoreError) {
        guard let work = beforeNextStatement else { return }
        beforeNextStatement = nil
        try work()
    }

    /// The name `sql` is prepared under, preparing it now if needed; nil once the cache is full.
    private func statementName(for sql: String) throws(StoreError) -> String? {
        if let name = prepared[sql] { return name }
        guard prepared.count < Self.preparedLimit else { return nil }
        let name = newStatementName()
        _ = try take(exchange { PQsendPrepare(handle, name, sql, 0, nil) }, operation: "prepare")
        prepared[sql] = name
        return name
    }

    /// A name no statement of this session has had.
    private func newStatementName() -> String {
        defer { nextStatement += 1 }
        return "hearth_\(nextStatement)"
    }

    /// Whether SQLSTATE `code` says a prepared statement is gone (26000) or stale (0A000).
    private static func meansStatementIsGone(_ code: String?) -> Bool {
        code == "26000" || code == "0A000"
    }

    /// Runs `body` with `longExchangeTimeoutMilliseconds` as the wait for an answer (work
    /// known to be long, such as a migration), then the usual wait again.
    func allowingLongExchanges<T>(_ body: () throws(StoreError) -> T) throws(StoreError) -> T {
        let usual = exchangeTimeout
        exchangeTimeout = max(usual, Self.longExchangeTimeoutMilliseconds)
        defer { exchangeTimeout = usual }
        return try body()
    }

    /// What `PQexec` does (the last result of what `send` sent; the first failed one if
    /// any failed), waiting at most `exchangeTimeout` for each of the server's bytes: past it the
    /// connection's socket is shut down, so libpq finds it closed and the connection broken
    /// (`isBroken`; `reset()` reconnects), and the answer is nil (a failure saying so).
    private func exchange(_ send: () -> Int32) -> OpaquePointer? {
        var kept: OpaquePointer? = nil
        let answered = exchangeEach(send) { next in
            if let previous = kept {
                // PQexec keeps a failure over what follows it.
                if Self.failed(previous) && !Self.failed(next) { PQclear(next); return }
                PQclear(previous)
            }
            kept = next
        }
        if !answered, let kept {
            PQclear(kept)
            return nil
        }
        return kept
    }

    /// Sends with `send` and hands each result to `take`, in order, as it arrives (`take`
    /// owns it), waiting at most `exchangeTimeout` for each of the server's bytes. False
    /// when nothing could be sent or the wait ran out (the connection is then given up).
    /// `untilSync`: a pipeline's exchange, whose answers go on past the end of each
    /// statement's results (where libpq gives no result) up to the sync's.
    private func exchangeEach(_ send: () -> Int32, untilSync: Bool = false, _ take: (OpaquePointer) -> Void) -> Bool {
        exchanges += 1
        guard send() == 1 else { return false }
        let clock = ContinuousClock()
        var deadline = clock.now.advanced(by: .milliseconds(Int64(exchangeTimeout)))
        while true {
            while PQisBusy(handle) == 1 {
                guard waitReadable(until: deadline, clock) else {
                    timedOut = true
                    giveUp()
                    return false
                }
                if PQconsumeInput(handle) != 1 { break }
                // Bytes came: the server is answering, so the wait starts over.
                deadline = clock.now.advanced(by: .milliseconds(Int64(exchangeTimeout)))
            }
            guard let next = PQgetResult(handle) else {
                // Between a pipeline's statements; a lost connection answers no more.
                if untilSync && PQstatus(handle) == CONNECTION_OK { continue }
                return !untilSync
            }
            let isSync = PQresultStatus(next) == PGRES_PIPELINE_SYNC
            take(next)
            if isSync { return true }
        }
    }

    private static func failed(_ result: OpaquePointer) -> Bool {
        ![PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY].contains(PQresultStatus(result))
    }

    /// Exchanges with the server so far (each statement, prepare, BEGIN or COMMIT sent
    /// alone is one; `runPipelined` is one for all its statements): tests count round trips.
    private(set) var exchanges = 0

    /// What `runPipelined` got back: the results of the statements that succeeded, in order,
    /// and the failure of the one after them, if any (the server runs none after a failed one).
    struct Answers {
        var results: [PGResult]
        var failure: StoreError?
        /// Whether the failure is the server's answer to the statement after `results` on a
        /// connection still up: then the server certainly ran none of the statements after it.
        var refusedByServer = false
    }

    /// A statement for `runPipelined`: SQL with parameters `$1`, `$2` … bound from `params`.
    struct Statement {
        let sql: String
        var params: [PGValue] = []
    }

    /// Runs `statements`, each with its own parameters, in one exchange (libpq's pipeline
    /// mode: the extended protocol, one sync after the last), one round trip for all, and
    /// returns each one's result in order. In a transaction (BEGIN first, or one already
    /// open) they run in it in turn, each seeing what the ones before it did; when one
    /// fails, the server runs none after it (they come back aborted) and the failure is the
    /// failed one's. A lost connection or an exchange timeout ends the answers where they
    /// stopped, with the failure saying so: statements after the last answered one may have
    /// run or not. Each statement is prepared on this session on first use, in the same
    /// exchange (as `query` does, up to `preparedLimit`), so the server parses and plans it
    /// once per session, not at every exchange as the simple query protocol would.
    func runPipelined(_ statements: [Statement]) -> Answers {
        var answers = Answers(results: [], failure: nil)
        var encoded: [PGParameters] = []
        do throws(StoreError) {
            try runDeferred()
            for statement in statements { encoded.append(try PGParameters(statement.params)) }
        } catch {
            answers.failure = error
            return answers
        }
        // Each statement's name, and whether it is to be prepared in this exchange.
        var plan: [(name: String?, prepare: Bool)] = []
        var naming: [String: String] = [:]
        for statement in statements {
            if let name = prepared[statement.sql] ?? naming[statement.sql] {
                plan.append((name, false))
            } else if prepared.count + naming.count < Self.preparedLimit {
                let name = newStatementName()
                naming[statement.sql] = name
                plan.append((name, true))
            } else {
                plan.append((nil, false))
            }
        }
        guard PQenterPipelineMode(handle) == 1 else {
            answers.failure = failure(nil, operation: "pipeline")
            return answers
        }
        // What each result answers, in the order sent: a preparation (of that statement) or a statement.
        var expected: [(statement: Int, isPreparation: Bool)] = []
        var failed: OpaquePointer? = nil
        var synced = false
        var next = 0
        let answered = exchangeEach({
            for (index, (statement, parameters)) in zip(statements, encoded).enumerated() {
                let (name, prepare) = plan[index]
                if prepare, let name {
                    guard PQsendPrepare(handle, name, statement.sql, 0, nil) == 1 else { return 0 }
                    expected.append((index, true))
                }
                let sent = parameters.withPointers { values in
                    if let name { return PQsendQueryPrepared(handle, name, Int32(statement.params.count), values, nil, nil, 0) }
                    return PQsendQueryParams(handle, statement.sql, Int32(statement.params.count), nil, values, nil, nil, 0)
                }
                guard sent == 1 else { return 0 }
                expected.append((index, false))
            }
            return PQpipelineSync(handle)
        }, untilSync: true) { result in
            let status = PQresultStatus(result)
            if status == PGRES_PIPELINE_SYNC {
                synced = true
                PQclear(result)
                return
            }
            let answering = next < expected.count ? expected[next] : nil
            next += 1
            if status == PGRES_PIPELINE_ABORTED || failed != nil {
                PQclear(result)  // not run, after the failed one
            } else if Self.failed(result) {
                failed = result
            } else if let answering, answering.isPreparation {
                prepared[statements[answering.statement].sql] = plan[answering.statement].name
                PQclear(result)
            } else {
                answers.results.append(PGResult(result))
            }
        }
        // Leaves pipeline mode only when every answer was read; a connection given up
        // mid-exchange is broken and reset before its next use.
        if answered && synced { _ = PQexitPipelineMode(handle) }
        if let failed {
            answers.failure = failure(failed, operation: "execute")
            answers.refusedByServer = PGFailure.field(failed, PGFailure.sqlstateField) != nil && PQstatus(handle) == CONNECTION_OK
            // Forgotten, so the next exchange prepares them afresh.
            if Self.meansStatementIsGone(PGFailure.field(failed, PGFailure.sqlstateField)) {
                for statement in statements { prepared[statement.sql] = nil }
            }
            PQclear(failed)
        } else if !answered || !synced || answers.results.count < statements.count {
            answers.failure = failure(nil, operation: "execute")
        }
        return answers
    }

    /// Whether the socket became readable before `deadline` (false: it did not, or there is none).
    private func waitReadable(until deadline: ContinuousClock.Instant, _ clock: ContinuousClock) -> Bool {
        while true {
            let fd = PQsocket(handle)
            guard fd >= 0 else { return false }
            let wait = Self.milliseconds(until: deadline, clock)
            if wait <= 0 { return false }
            // A failed wait counts as ready: the read that follows reports the failure.
            return (try? Syscall.waitReadable(fd, timeoutMilliseconds: wait)) ?? true
        }
    }

    /// Ends a connection whose server did not answer in time: the socket is shut down (the
    /// descriptor stays libpq's), what is left is read, so the connection shows broken.
    private func giveUp() {
        let fd = PQsocket(handle)
        if fd >= 0 { Syscall.shutdownBothWays(fd) }
        _ = PQconsumeInput(handle)
        for _ in 0..<8 {
            guard let leftover = PQgetResult(handle) else { break }
            PQclear(leftover)
        }
    }

    /// Set when an exchange ran out of time (its failure says so).
    private var timedOut = false

    /// Wraps a result, or throws the failure it (or its absence) stands for.
    private func take(_ raw: OpaquePointer?, operation: String) throws(StoreError) -> PGResult {
        guard let raw else { throw failure(nil, operation: operation) }
        let result = PGResult(raw)  // cleared when released, also on the throwing path
        switch PQresultStatus(raw) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY:
            return result
        default:
            throw failure(raw, operation: operation)
        }
    }

    /// The `StoreError` for a failed result (nil: libpq had none, e.g. the connection is gone).
    func failure(_ result: OpaquePointer?, operation: String) -> StoreError {
        let broken = PQstatus(handle) != CONNECTION_OK
        let sqlstate = result.flatMap { PGFailure.field($0, PGFailure.sqlstateField) }
        let primary = result.flatMap { PGFailure.field($0, PGFailure.primaryMessageField) }
        let constraint = result.flatMap { PGFailure.field($0, PGFailure.constraintField) }
        var message = primary ?? PGFailure.trimmed(PQerrorMessage(handle))
        if result == nil && timedOut {
            timedOut = false
            message = "the database did not answer within \(exchangeTimeout) ms; the connection was given up"
            return PGFailure.error(sqlstate: nil, message: message, constraint: nil, broken: true, operation: operation)
        }
        return PGFailure.error(sqlstate: sqlstate, message: message, constraint: constraint, broken: broken, operation: operation)
    }

    // MARK: Transactions

    /// Whether a transaction is open on this session (also one that failed and awaits ROLLBACK).
    var isInTransaction: Bool {
        let status = PQtransactionStatus(handle)
        return status == PQTRANS_INTRANS || status == PQTRANS_INERROR || status == PQTRANS_ACTIVE
    }

    /// Runs `body` in a transaction: BEGIN, `body`, COMMIT. When `body` throws, the
    /// transaction is rolled back and its error is rethrown unchanged; a failed BEGIN or
    /// COMMIT throws a `StoreError` (a `.conflict` one means the whole transaction may be
    /// run again). Transactions do not nest: calling this inside one throws.
    func transaction<T>(_ isolation: Isolation = .readCommitted, readOnly: Bool = false, _ body: () throws -> T) throws -> T {
        guard !isInTransaction else {
            throw PGFailure.make(code: "25001", kind: .other, message: "a transaction is already open on this connection", operation: "begin")
        }
        let begin = "BEGIN ISOLATION LEVEL \(isolation.sql)" + (readOnly ? " READ ONLY" : "")
        _ = try take(exchange { PQsendQuery(handle, begin) }, operation: "begin")
        let value: T
        do {
            value = try body()
        } catch {
            rollbackIfOpen()
            throw error
        }
        try commit()
        return value
    }

    /// COMMIT; throws when the server rolled back instead (the transaction had failed and
    /// `body` swallowed the error: answering COMMIT with ROLLBACK is how PostgreSQL says so).
    func commit() throws(StoreError) {
        let result: PGResult
        do {
            result = try take(exchange { PQsendQuery(handle, "COMMIT") }, operation: "commit")
        } catch {
            rollbackIfOpen()
            throw error
        }
        if result.commandStatus == "ROLLBACK" {
            throw PGFailure.make(code: "25P02", kind: .other,
                                 message: "the transaction failed earlier and was rolled back instead of committed", operation: "commit")
        }
    }

    /// Ends a transaction left open (best effort: a lost connection has none left).
    private func rollbackIfOpen() {
        guard isInTransaction else { return }
        if let raw = exchange({ PQsendQuery(handle, "ROLLBACK") }) { PQclear(raw) }
    }

    static func milliseconds(until deadline: ContinuousClock.Instant, _ clock: ContinuousClock) -> Int32 {
        let left = clock.now.duration(to: deadline)
        guard left > .zero else { return 0 }
        let (seconds, attoseconds) = left.components
        let ms = seconds * 1_000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000  // rounded up
        return Int32(clamping: ms)
    }

    // MARK: Connection state

    /// Whether the connection is lost (libpq noticed a failure); `reset()` reconnects.
    var isBroken: Bool { PQstatus(handle) != CONNECTION_OK }

    /// How many statements this session holds prepared (at most `preparedLimit`).
    var preparedCount: Int { prepared.count }

    /// libpq's last message about the connection (why it broke or failed to connect).
    var errorMessage: String { PGFailure.trimmed(PQerrorMessage(handle)) }

    /// `isBroken`, after reading what the server sent while the connection was idle (no
    /// round trip, one non-blocking read): a session the server ended meanwhile (restart,
    /// `pg_terminate_backend`, a failover) shows as broken before a statement is sent on
    /// it, so its owner reconnects instead of failing that statement.
    var isBrokenNow: Bool {
        if PQstatus(handle) != CONNECTION_OK { return true }
        // Twice: a session ended by the server first sends its FATAL message, which the
        // first read takes; the second meets the end of the stream and marks it broken.
        if PQtransactionStatus(handle) == PQTRANS_IDLE {
            for _ in 0..<2 where PQstatus(handle) == CONNECTION_OK { _ = PQconsumeInput(handle) }
        }
        return PQstatus(handle) != CONNECTION_OK
    }

    /// Reconnects with the same parameters (blocking): a new session, so prepared statements
    /// are forgotten and the session settings and LISTENs are applied again. Check
    /// `isBroken` afterwards: the server may still be unreachable.
    func reset() {
        prepared.removeAll()
        PQreset(handle)
        guard PQstatus(handle) == CONNECTION_OK else { return }
        do {
            try configureSession()
            for channel in channels { try execute("LISTEN \(channel)") }
        } catch {
            // The next statement reports the failure; isBroken tells the owner to reset again.
        }
    }
}
