import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Why the throwaway PostgreSQL cluster could not be used: what failed, the command that
/// failed (if one did) and its output or the server's log.
public struct PostgresClusterError: Error, CustomStringConvertible {
    public let message: String
    public let command: [String]
    public let output: String

    public init(_ message: String, command: [String] = [], output: String = "") {
        (self.message, self.command, self.output) = (message, command, output)
    }

    public var description: String {
        var text = "PostgreSQL test cluster: \(message)"
        if !command.isEmpty { text += "\ncommand: \(command.joined(separator: " "))" }
        if !output.isEmpty { text += "\noutput:\n\(output)" }
        return text
    }
}

/// Whether the PostgreSQL tests run: `@Suite(.enabled(if: PostgresTests.enabled))`.
public enum PostgresTests {
    /// True when PostgreSQL is installed, and also when it is required but missing: then the
    /// tests run and fail in `PostgresCluster.shared()` instead of being skipped silently.
    public static var enabled: Bool { PostgresCluster.isAvailable || PostgresCluster.isRequired }
}

/// A throwaway PostgreSQL cluster for tests: one per test process, started on
/// first use in a fresh directory on a free loopback port, trust authentication, stopped
/// (immediate shutdown) and deleted when the process exits. Tests get a fresh database
/// each from `makeDatabase()`, owned by the non-superuser role `hearth`, as a deployment
/// would give Hearth.
///
/// PostgreSQL refuses to run as root, so as root every server binary runs as the
/// `postgres` system user (`runuser`, else `setpriv`) on a directory handed to that user.
/// The binaries are the newest `/usr/lib/postgresql/<version>/bin`, or `$HEARTH_PG_BINDIR`.
public final class PostgresCluster: Sendable {
    /// The server's TCP port on 127.0.0.1.
    public let port: Int
    /// The superuser's URL (role `hearth_admin`, database `postgres`).
    public let adminURL: String
    /// The cluster's directory: `data/`, `log`, the Unix socket.
    public let directory: String
    private let tools: Tools

    private init(port: Int, directory: String, tools: Tools) {
        self.port = port
        self.directory = directory
        self.tools = tools
        self.adminURL = "postgresql://\(Self.admin)@127.0.0.1:\(port)/postgres"
    }

    /// A cluster of its own, for a test that kills and restarts PostgreSQL (`kill()`,
    /// `restart()`) without disturbing the tests on the shared one; stopped and deleted when
    /// the process exits, as the shared one is.
    public static func startPrivate() throws(PostgresClusterError) -> PostgresCluster {
        try start()
    }

    static let admin = "hearth_admin"
    static let role = "hearth"

    // MARK: The shared cluster

    /// The process's one cluster, started on first call (later calls wait for it). A failed
    /// start is remembered: every later call throws the same error without trying again.
    public static func shared() throws(PostgresClusterError) -> PostgresCluster {
        try instance.withLock { (state: inout Result<PostgresCluster, PostgresClusterError>?) throws(PostgresClusterError) -> PostgresCluster in
            if let state { return try state.get() }
            let started: Result<PostgresCluster, PostgresClusterError>
            do throws(PostgresClusterError) { started = .success(try start()) } catch { started = .failure(error) }
            state = started
            return try started.get()
        }
    }

    private static let instance = Mutex<Result<PostgresCluster, PostgresClusterError>?>(nil)
    /// What the exit handler stops: the directories of the clusters started (the
    /// postmaster's pid is read from `data/postmaster.pid` then, as `restart()` changes it).
    private static let running = Mutex<[String]>([])

    /// Whether PostgreSQL's server binaries are installed (and, as root, the `postgres`
    /// user to run them as exists).
    public static var isAvailable: Bool { installed != nil }

    /// Whether a missing PostgreSQL must fail the tests rather than skip them: on CI
    /// (`CI=true`) or with `HEARTH_REQUIRE_POSTGRES=1`.
    public static var isRequired: Bool {
        let environment = ProcessInfo.processInfo.environment
        return environment["CI"] == "true" || environment["HEARTH_REQUIRE_POSTGRES"] == "1"
    }

    // MARK: Databases

    /// Creates an empty database `hearth_<random hex>` owned by `hearth` and returns its URL
    /// (`postgresql://hearth:hearth@127.0.0.1:PORT/NAME`).
    public func makeDatabase() throws(PostgresClusterError) -> String {
        let name = "hearth_" + Self.randomHex()
        try sql("CREATE DATABASE \(name) OWNER \(Self.role)")
        return "postgresql://\(Self.role):\(Self.role)@127.0.0.1:\(port)/\(name)"
    }

    /// Drops a database made by `makeDatabase()` (its name, or its URL), disconnecting its
    /// sessions. Optional: the whole cluster goes when the process exits.
    public func dropDatabase(_ nameOrURL: String) throws(PostgresClusterError) {
        let name = nameOrURL.split(separator: "/").last.map(String.init) ?? nameOrURL
        guard name.hasPrefix("hearth_"), name.utf8.allSatisfy({ $0 == UInt8(ascii: "_") || (48...57).contains($0) || (97...122).contains($0) }) else {
            throw PostgresClusterError("not a test database name: \(name)")
        }
        try sql("DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
    }

    /// Runs `statement` as the superuser with psql.
    public func sql(_ statement: String) throws(PostgresClusterError) {
        _ = try value(statement)
    }

    /// Runs `query` as the superuser with psql and returns its output unaligned, without
    /// headers (one row per line, columns separated by `|`), trimmed.
    /// `database`: a name or a URL from `makeDatabase()`; the maintenance database when nil.
    public func value(_ query: String, in database: String? = nil) throws(PostgresClusterError) -> String {
        let name = database.map { $0.split(separator: "/").last.map(String.init) ?? $0 } ?? "postgres"
        let output = try Self.run(tools.psql, ["-X", "-q", "-A", "-t", "-h", "127.0.0.1", "-p", String(port), "-U", Self.admin, "-d", name,
                                               "-v", "ON_ERROR_STOP=1", "-c", query], as: nil, directory: directory)
        return output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    // MARK: Starting and stopping

    private static func start() throws(PostgresClusterError) -> PostgresCluster {
        guard let tools = installed else {
            throw PostgresClusterError(binDirectory() == nil
                ? "PostgreSQL is not installed (no initdb in /usr/lib/postgresql/*/bin, or in $HEARTH_PG_BINDIR if set)"
                : "PostgreSQL refuses to run as root, and there is no `postgres` user (or pg_ctl, psql) to run it as")
        }
        let directory = try makeDirectory(owner: tools.serviceUser)
        do {
            return try start(tools: tools, directory: directory)
        } catch {
            // No server is left running (it failed to start, or registerStop stops it).
            try? FileManager.default.removeItem(atPath: directory)
            throw error
        }
    }

    private static func start(tools: Tools, directory: String) throws(PostgresClusterError) -> PostgresCluster {
        let data = directory + "/data", log = directory + "/log"
        _ = try run(tools.initdb, ["-D", data, "-U", admin, "--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C"],
                    as: tools.serviceUser, directory: directory)
        // The port is free when picked, and below the ephemeral range, but another caller of
        // `freeLoopbackPort` may draw it before the server binds it: then the start is tried
        // again on another.
        var attempt = 0
        while true {
            attempt += 1
            let port = try freePort()
            do {
                try startServer(tools: tools, directory: directory, port: port)
            } catch {
                let serverLog = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
                if attempt < 3 && (serverLog.contains("could not bind") || serverLog.contains("already in use")) { continue }
                throw error
            }
            let cluster = PostgresCluster(port: port, directory: directory, tools: tools)
            try cluster.registerStop(data: data)
            do {
                try cluster.sql("CREATE ROLE \(role) LOGIN PASSWORD '\(role)'")  // not a superuser, no CREATEDB
            } catch {
                running.withLock { $0.removeAll { $0 == directory } }
                stop(directory)
                throw error
            }
            return cluster
        }
    }

    /// `pg_ctl start` on `port`, waiting until the server takes connections.
    private static func startServer(tools: Tools, directory: String, port: Int) throws(PostgresClusterError) {
        let data = directory + "/data", log = directory + "/log"
        let options = "-c listen_addresses=127.0.0.1 -p \(port) -k '\(directory)' -c fsync=on -c max_connections=1000 -c shared_buffers=64MB"
        let command = [tools.pgCtl, "-D", data, "-l", log, "-o", options, "-w", "-t", "120", "start"]
        do {
            _ = try run(tools.pgCtl, Array(command.dropFirst()), as: tools.serviceUser, directory: directory)
        } catch {
            let serverLog = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            throw PostgresClusterError("the server did not start", command: command, output: error.output + "\nserver log:\n" + serverLog)
        }
    }

    /// The postmaster's pid, from `data/postmaster.pid`.
    private static func postmasterPID(_ directory: String) -> pid_t? {
        let text = (try? String(contentsOfFile: directory + "/data/postmaster.pid", encoding: .utf8))?.split(separator: "\n").first
        return text.flatMap { pid_t($0.trimmingCharacters(in: .whitespaces)) }
    }

    /// Kills the server as a crash would: the postmaster is stopped (so it forks no more),
    /// then it and every process it started (the backends, the checkpointer, the WAL
    /// writer…) get SIGKILL; returns once they are all gone. What was committed is in the
    /// WAL; `restart()` recovers it. Only a private cluster (`startPrivate()`) should be killed.
    public func kill() throws(PostgresClusterError) {
        guard let postmaster = Self.postmasterPID(directory) else { throw PostgresClusterError("no postmaster.pid to kill") }
        _ = Glibc.kill(postmaster, SIGSTOP)
        let processes = [postmaster] + Self.children(of: postmaster)
        for pid in processes { _ = Glibc.kill(pid, SIGKILL) }
        let deadline = ContinuousClock.now.advanced(by: .seconds(30))
        while processes.contains(where: Self.isAlive) {
            guard ContinuousClock.now < deadline else { throw PostgresClusterError("the killed server's processes did not go away") }
            usleep(10_000)
        }
        // The lock files name the dead postmaster, which may linger as a zombie here (no
        // init reaps it in a container): they would stop the restart.
        unlink(directory + "/data/postmaster.pid")
        unlink(directory + "/.s.PGSQL.\(port).lock")
    }

    /// Starts the server again on the same port after `kill()` (crash recovery runs first);
    /// returns once it takes connections.
    public func restart() throws(PostgresClusterError) {
        try Self.startServer(tools: tools, directory: directory, port: port)
    }

    /// The processes whose parent is `parent` (from /proc).
    private static func children(of parent: pid_t) -> [pid_t] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap(pid_t.init).filter { pid in
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { return false }
            // "pid (comm) state ppid …": the fields after the command's closing parenthesis.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            return fields.count > 1 && pid_t(fields[1]) == parent
        }
    }

    /// Whether `pid` still runs (a zombie, which only waits to be reaped, does not).
    private static func isAlive(_ pid: pid_t) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return false }
        let state = stat[stat.index(after: close)...].split(separator: " ").first
        return state != "Z" && state != "X"
    }

    /// Arranges for the server to be stopped and its directory deleted when this process
    /// ends: by an `atexit` handler, and by a detached watchdog shell that also covers a
    /// crash (it polls every second for this process to be gone).
    private func registerStop(data: String) throws(PostgresClusterError) {
        guard Self.postmasterPID(directory) != nil else {
            throw PostgresClusterError("no postmaster.pid after the start", output: (try? String(contentsOfFile: directory + "/log", encoding: .utf8)) ?? "")
        }
        let first = Self.running.withLock { running in
            running.append(directory)
            return running.count == 1
        }
        if first { atexit { PostgresCluster.stopServers() } }
        // The postmaster's pid is read when it is stopped: `restart()` changes it.
        let script = """
            ( trap '' INT HUP TERM
              while kill -0 "$1" 2>/dev/null; do sleep 1; done
              [ -e "$2/postmaster.pid" ] && kill -QUIT "$(head -n 1 "$2/postmaster.pid")" 2>/dev/null
              n=0; while [ -e "$2/postmaster.pid" ] && [ "$n" -lt 100 ]; do sleep 0.1; n=$((n+1)); done
              rm -rf "$3" ) </dev/null >/dev/null 2>&1 &
            """
        _ = try Self.run("/bin/sh", ["-c", script, "sh", String(getpid()), data, directory], as: nil,
                         directory: directory, ownProcessGroup: true)
    }

    /// `pg_ctl stop -m immediate` without running a process (this runs at exit): SIGQUIT to
    /// each cluster's postmaster, a bounded wait for it to go, then its directory is deleted. Once.
    private static func stopServers() {
        let taken = running.withLockIfAvailable { running -> [String] in
            defer { running = [] }
            return running
        } ?? []
        for directory in taken { stop(directory) }
    }

    /// SIGQUIT to the cluster's postmaster, a bounded wait for it to go, then its directory is deleted.
    private static func stop(_ directory: String) {
        if let pid = postmasterPID(directory) {
            Glibc.kill(pid, SIGQUIT)
            for _ in 0..<500 {  // up to 5 s
                if Glibc.kill(pid, 0) != 0 || access(directory + "/data/postmaster.pid", F_OK) != 0 { break }
                usleep(10_000)
            }
        }
        try? FileManager.default.removeItem(atPath: directory)
    }

    // MARK: Installation

    /// The binaries, found once.
    private struct Tools: Sendable {
        var initdb: String
        var pgCtl: String
        var psql: String
        /// Whom to run the server binaries as (we are root), or nil.
        var serviceUser: ServiceUser?
    }

    private struct ServiceUser: Sendable {
        var name: String
        var uid: uid_t
        var gid: gid_t
    }

    private static let installed: Tools? = {
        guard let bin = binDirectory() else { return nil }
        let psql = [bin + "/psql", "/usr/bin/psql"].first { FileManager.default.isExecutableFile(atPath: $0) }
        guard let psql, FileManager.default.isExecutableFile(atPath: bin + "/pg_ctl") else { return nil }
        var user: ServiceUser?
        if geteuid() == 0 {
            guard let entry = getpwnam("postgres") else { return nil }
            user = ServiceUser(name: "postgres", uid: entry.pointee.pw_uid, gid: entry.pointee.pw_gid)
        }
        return Tools(initdb: bin + "/initdb", pgCtl: bin + "/pg_ctl", psql: psql, serviceUser: user)
    }()

    /// `$HEARTH_PG_BINDIR`, else the newest /usr/lib/postgresql/<version>/bin with initdb.
    /// (Not `pg_config --bindir`: libpq-dev's pg_config may point where no server is.)
    private static func binDirectory() -> String? {
        let files = FileManager.default
        if let dir = ProcessInfo.processInfo.environment["HEARTH_PG_BINDIR"], !dir.isEmpty {
            return files.isExecutableFile(atPath: dir + "/initdb") ? dir : nil
        }
        let root = "/usr/lib/postgresql"
        let versions = ((try? files.contentsOfDirectory(atPath: root)) ?? [])
            .compactMap { name in Double(name).map { (name, $0) } }
            .sorted { $0.1 > $1.1 }
        return versions.map { "\(root)/\($0.0)/bin" }.first { files.isExecutableFile(atPath: $0 + "/initdb") }
    }

    // MARK: Helpers

    /// A fresh directory under /tmp (reachable by the `postgres` user), handed to `owner`.
    private static func makeDirectory(owner: ServiceUser?) throws(PostgresClusterError) -> String {
        var template = Array("/tmp/hearth-pg-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { buffer in buffer.baseAddress.flatMap { mkdtemp($0) } } != nil
        guard made else { throw PostgresClusterError("mkdtemp failed: errno \(errno)") }
        let path = template.withUnsafeBufferPointer { buffer in
            String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        if let owner, chown(path, owner.uid, owner.gid) != 0 {
            throw PostgresClusterError("chown \(path) to \(owner.name) failed: errno \(errno)")
        }
        return path
    }

    /// A TCP port on 127.0.0.1 that was free a moment ago, below the kernel's ephemeral
    /// range (`freeLoopbackPort`), where no test's server on port 0 and no outgoing
    /// connection can take it before PostgreSQL binds it.
    private static func freePort() throws(PostgresClusterError) -> Int {
        do {
            return try freeLoopbackPort()
        } catch {
            throw PostgresClusterError("could not bind a loopback port: \(error)")
        }
    }

    private static func randomHex() -> String {
        let hex = String(UInt64.random(in: .min ... .max), radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }

    /// Runs a program to its end, as `user` if given, with stdin from /dev/null and stdout
    /// and stderr into a file (no pipes to drain); returns the output, throws on failure.
    ///
    /// posix_spawn, not Foundation's `Process`: on Linux `Process` learns of a child's exit
    /// from a socket the child inherits, and `pg_ctl start` hands everything it inherited to
    /// the postmaster it leaves running, so `waitUntilExit()` never returned. Here the child
    /// gets only descriptors 0–2 (closefrom 3), and its exit is a plain waitpid.
    private static func run(_ executable: String, _ arguments: [String], as user: ServiceUser?,
                            directory: String, ownProcessGroup: Bool = false) throws(PostgresClusterError) -> String {
        var command = [executable] + arguments
        if let user {
            if let runuser = ["/usr/sbin/runuser", "/sbin/runuser"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }) {
                command = [runuser, "-u", user.name, "--"] + command
            } else {
                command = ["/usr/bin/setpriv", "--reuid=\(user.uid)", "--regid=\(user.gid)", "--init-groups", "--"] + command
            }
        }
        var template = Array("/tmp/hearth-pg-out-XXXXXX".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { buffer in buffer.baseAddress.map { mkstemp($0) } ?? -1 }
        guard fd >= 0 else { throw PostgresClusterError("mkstemp failed: errno \(errno)", command: command) }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)  // the child gets it by dup2 only
        let outputPath = template.withUnsafeBufferPointer { buffer in
            String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        defer {
            close(fd)
            unlink(outputPath)
        }
        // The cluster is configured by arguments only: no PGHOST, PGOPTIONS … from the caller.
        let environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("PG") }.map { "\($0.key)=\($0.value)" }
        let status = try spawnAndWait(command, environment: environment, directory: directory, output: fd, ownProcessGroup: ownProcessGroup)
        let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        guard status == 0 else {
            let how = status & 0x7F == 0 ? "exited with status \((status >> 8) & 0xFF)" : "was killed by signal \(status & 0x7F)"
            throw PostgresClusterError(how, command: command, output: text)
        }
        return text
    }

    /// posix_spawn `command` (stdin /dev/null, stdout and stderr to `output`, nothing else
    /// inherited, default signal handling; `ChildProcess.spawn`) and waitpid for it; the
    /// raw wait status. `ownProcessGroup`: out of this process's group, so a signal to the
    /// test runner's group (Ctrl-C, a runner cleaning up) does not reach it.
    private static func spawnAndWait(_ command: [String], environment: [String], directory: String,
                                     output: Int32, ownProcessGroup: Bool) throws(PostgresClusterError) -> Int32 {
        let request = ChildProcess.SpawnRequest(command: command, environment: environment, directory: directory,
                                                streams: [-1, output, output], ownProcessGroup: ownProcessGroup)
        let pid: pid_t
        do { pid = try ChildProcess.spawn(request) } catch { throw PostgresClusterError(error.description, command: command) }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { throw PostgresClusterError("waitpid failed: errno \(errno)", command: command) }
        }
        return status
    }
}
