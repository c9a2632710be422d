// The PostgreSQL client comparison (scripts/bench/pgclient.sh runs it).
//
//   pgclient-bench CLIENT WORKLOAD CONNECTIONS SECONDS HOST PORT DATABASE
//
// CLIENT: libpq (C, blocking, one thread per connection: HearthPostgres's shape) or nio
// (postgres-nio 1.33.2, async, on its default event-loop group). Both use prepared
// statements with bound parameters, as HearthPostgres does.
// WORKLOAD: select (one round trip: SELECT $1::bigint + 1) or batch (the writer's shape:
// BEGIN; UPDATE of one counter row; 8 INSERTs; COMMIT; 11 round trips).
// Prints one JSON line: operations per second over the window.
import CLibPQBench
import Dispatch
import Foundation
import Logging
import PostgresNIO
import Synchronization

struct Config: Sendable {
    var client: String, workload: String, host: String, database: String
    var port: Int, connections: Int, seconds: Double
    let user = "hearth", password = "hearth"
}

// MARK: libpq

func libpqWorker(_ config: Config, id: Int, until deadline: ContinuousClock.Instant) -> Int {
    let (host, port, database, user, password, workload) = (config.host, config.port, config.database, config.user, config.password, config.workload)
    let conninfo = "host=\(host) port=\(port) dbname=\(database) user=\(user) password=\(password)"
    guard let conn = PQconnectdb(conninfo), PQstatus(conn) == CONNECTION_OK else { fatalError("libpq: cannot connect") }
    defer { PQfinish(conn) }
    func check(_ result: OpaquePointer?, _ what: String) {
        let status = PQresultStatus(result)
        if status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK {
            fatalError("libpq \(what): \(String(cString: PQerrorMessage(conn)))")
        }
        PQclear(result)
    }
    check(PQprepare(conn, "sel", "SELECT $1::bigint + 1", 1, nil), "prepare sel")
    check(PQprepare(conn, "upd", "UPDATE bench_meta SET n = n + 1 WHERE id = 1 RETURNING n", 0, nil), "prepare upd")
    check(PQprepare(conn, "ins", "INSERT INTO bench_rows(k, v) VALUES ($1, $2)", 2, nil), "prepare ins")
    func run(_ name: String, _ params: [String]) {
        let cStrings = params.map { strdup($0) }
        defer { cStrings.forEach { free($0) } }
        let values: [UnsafePointer<CChar>?] = cStrings.map { UnsafePointer($0) }
        check(values.withUnsafeBufferPointer { PQexecPrepared(conn, name, Int32(params.count), $0.baseAddress, nil, nil, 0) }, name)
    }
    var done = 0
    var n = 0
    while ContinuousClock.now < deadline {
        if workload == "select" {
            run("sel", [String(n)])
        } else {
            check(PQexec(conn, "BEGIN"), "begin")
            run("upd", [])
            for j in 0..<8 { run("ins", ["w\(id)-\(n)-\(j)", String(n)]) }
            check(PQexec(conn, "COMMIT"), "commit")
        }
        n += 1
        done += 1
    }
    return done
}

// MARK: postgres-nio

struct Select: PostgresPreparedStatement {
    static let sql = "SELECT $1::bigint + 1"
    typealias Row = Int64
    var value: Int64
    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings()
        bindings.append(value)
        return bindings
    }
    func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Int64.self) }
}

struct Bump: PostgresPreparedStatement {
    static let sql = "UPDATE bench_meta SET n = n + 1 WHERE id = 1 RETURNING n"
    typealias Row = Int64
    func makeBindings() throws -> PostgresBindings { PostgresBindings() }
    func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Int64.self) }
}

struct Insert: PostgresPreparedStatement {
    static let sql = "INSERT INTO bench_rows(k, v) VALUES ($1, $2)"
    typealias Row = ()
    var key: String
    var value: Int64
    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings()
        bindings.append(key)
        bindings.append(value)
        return bindings
    }
    func decodeRow(_ row: PostgresRow) throws -> Row {}
}

func nioWorker(_ config: Config, id: Int, until deadline: ContinuousClock.Instant) async throws -> Int {
    let (host, port, database, user, password, workload) = (config.host, config.port, config.database, config.user, config.password, config.workload)
    let logger = Logger(label: "bench", factory: { _ in SwiftLogNoOpLogHandler() })
    let configuration = PostgresConnection.Configuration(host: host, port: port, username: user, password: password, database: database, tls: .disable)
    let conn = try await PostgresConnection.connect(configuration: configuration, id: id, logger: logger)
    var done = 0
    var n: Int64 = 0
    while ContinuousClock.now < deadline {
        if workload == "select" {
            for try await value in try await conn.execute(Select(value: n), logger: logger) { precondition(value == n + 1) }
        } else {
            try await conn.query("BEGIN", logger: logger)
            for try await _ in try await conn.execute(Bump(), logger: logger) {}
            for j in 0..<8 { _ = try await conn.execute(Insert(key: "w\(id)-\(n)-\(j)", value: n), logger: logger) }
            try await conn.query("COMMIT", logger: logger)
        }
        n += 1
        done += 1
    }
    try await conn.close()
    return done
}

// MARK: Run

func measure(_ config: Config) async throws -> Double {
    let start = ContinuousClock.now
    let deadline = start + .milliseconds(Int64(config.seconds * 1000))
    var total = 0
    if config.client == "libpq" {
        // One thread per connection, as HearthPostgres's queues are (concurrentPerform would
        // cap the blocking workers at the core count).
        let counts = Mutex<[Int]>([])
        let finished = DispatchGroup()
        for id in 0..<config.connections {
            finished.enter()
            Thread {
                let count = libpqWorker(config, id: id, until: deadline)
                counts.withLock { $0.append(count) }
                finished.leave()
            }.start()
        }
        finished.wait()
        total = counts.withLock { $0.reduce(0, +) }
    } else {
        total = try await withThrowingTaskGroup(of: Int.self) { group in
            for id in 0..<config.connections { group.addTask { try await nioWorker(config, id: id, until: deadline) } }
            var sum = 0
            for try await count in group { sum += count }
            return sum
        }
    }
    let elapsed = ContinuousClock.now - start
    return Double(total) / (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
}

let arguments = CommandLine.arguments
guard arguments.count == 8, let connections = Int(arguments[3]), let seconds = Double(arguments[4]), let port = Int(arguments[6]) else {
    print("usage: pgclient-bench libpq|nio select|batch CONNECTIONS SECONDS HOST PORT DATABASE")
    exit(2)
}
let config = Config(client: arguments[1], workload: arguments[2], host: arguments[5], database: arguments[7],
                    port: port, connections: connections, seconds: seconds)
let rate = try await measure(config)
print(#"{"client": "\#(config.client)", "workload": "\#(config.workload)", "connections": \#(config.connections), "ops_per_s": \#(rate)}"#)
