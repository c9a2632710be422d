import Foundation
@_exported import HearthTesting
import Synchronization

/// The built `hearth` binary run as a child process, as an operator would run it.
///
/// The binary is found next to the test bundle (SwiftPM puts every product of a build in
/// one folder) or at `$HEARTH_BINARY`.
final class HearthProcess: @unchecked Sendable {  // `process` is set in init; `port` once, before `listening` is signalled; output is behind a Mutex
    let process = ChildProcess()
    let dataDirectory: String
    private let output = Mutex<String>("")
    private let listening = DispatchSemaphore(value: 0)
    private let exited = DispatchSemaphore(value: 0)
    private let logChanged = DispatchSemaphore(value: 0)
    /// Signalled at the end of the child's output, so `log` is complete after an exit.
    private let outputEnded = DispatchSemaphore(value: 0)
    private(set) var port: Int = 0

    /// How long to wait for a child event before failing the test instead of hanging.
    static let eventTimeout: DispatchTimeInterval = .seconds(60)

    static var binaryPath: String {
        if let path = ProcessInfo.processInfo.environment["HEARTH_BINARY"] { return path }
        let bundle = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        var candidate = bundle
        // .../debug/HearthPackageTests.xctest or .../debug/HearthPackageTests.xctest/Contents/...
        while candidate.path != "/" {
            let path = candidate.appendingPathComponent("hearth").path
            if FileManager.default.isExecutableFile(atPath: path) { return path }
            candidate = candidate.deletingLastPathComponent()
        }
        return bundle.appendingPathComponent("hearth").path
    }

    /// - Parameter umask: run the binary under this umask (through `sh`), e.g. "022".
    /// - Parameter launcher: a command that runs the binary (its path and arguments come
    ///   after it), e.g. `setpriv` to run it as another user.
    init(arguments: [String], dataDirectory: String, environment: [String: String] = [:], currentDirectory: String? = nil,
         umask: String? = nil, launcher: [String] = []) throws {
        self.dataDirectory = dataDirectory
        if let currentDirectory { process.currentDirectoryURL = URL(fileURLWithPath: currentDirectory) }
        if let executable = launcher.first {
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = Array(launcher.dropFirst()) + [Self.binaryPath] + arguments
        } else if let umask {
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", #"umask "$0" && exec "$@""#, umask, Self.binaryPath] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: Self.binaryPath)
            process.arguments = arguments
        }
        var env = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("HEARTH_") }
        env.merge(environment) { $1 }
        process.environment = env
        let pipe = Pipe()
        process.standardError = pipe
        process.standardOutput = pipe
        let outputEnded = self.outputEnded
        PipeReader.drain(pipe.fileHandleForReading, onData: { [weak self] data in
            guard let self else { return }
            let text = String(decoding: data, as: UTF8.self)
            defer { self.logChanged.signal() }
            let (found, port) = self.output.withLock { out -> (Bool, Int) in
                let wasListening = out.contains("listening on http://")
                out += text
                guard !wasListening, let range = out.range(of: "listening on http://") else { return (false, 0) }
                // Up to the line's end, or the closing quote of `--log-format json`'s message.
                let rest = out[range.upperBound...].prefix { $0 != "\n" && $0 != "\"" }
                guard let colon = rest.lastIndex(of: ":"), let port = Int(rest[rest.index(after: colon)...].trimmingCharacters(in: .whitespaces)) else { return (false, 0) }
                return (true, port)
            }
            if found {
                self.port = port
                self.listening.signal()
            }
        }, onEnd: { outputEnded.signal() })
        process.terminationHandler = { [exited] _ in exited.signal() }
        try process.run()
    }

    /// Rules that allow everything, for tests about REST behaviour rather than access.
    static let openRules = #"{"rules": {".read": true, ".write": true}}"#

    /// Writes `rules` to `<dataDirectory>/rules.json` and returns the file's path.
    static func writeRules(_ rules: String, in dataDirectory: String) throws -> String {
        let path = dataDirectory + "/rules.json"
        try rules.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// Starts `hearth serve` on port 0 in `dataDirectory` with `rules` and waits for its
    /// `listening on` line; `options`: more `serve` options (`--accept-emulator-owner`).
    static func serve(dataDirectory: String, rules: String = openRules, environment: [String: String] = [:],
                      options: [String] = []) throws -> HearthProcess {
        var environment = environment
        if environment["HEARTH_STORE"] == nil, let url = try TestStore.postgresURL(for: dataDirectory) {
            environment["HEARTH_STORE"] = url
        }
        let rulesPath = try writeRules(rules, in: dataDirectory)
        let child = try HearthProcess(
            arguments: ["serve", "--port", "0", "--data-dir", dataDirectory, "--rules", rulesPath] + options,
            dataDirectory: dataDirectory, environment: environment)
        try child.waitUntilListening()
        return child
    }

    func waitUntilListening() throws {
        if listening.wait(timeout: .now() + Self.eventTimeout) == .timedOut {
            process.terminate()
            throw ChildError.notListening(output: log)
        }
    }

    var log: String { output.withLock { $0 } }

    /// Waits until `text` appears `count` times in the output (an event, not a sleep: the
    /// output is polled as it arrives, with `eventTimeout` as the safety net).
    func waitForLog(_ text: String, count: Int) throws {
        let deadline = DispatchTime.now() + Self.eventTimeout
        while log.components(separatedBy: text).count - 1 < count {
            if DispatchTime.now() > deadline { throw ChildError.notListening(output: log) }
            _ = logChanged.wait(timeout: .now() + .milliseconds(100))
        }
    }
    var baseURL: String { "http://127.0.0.1:\(port)" }

    /// Sends `number` to the child unless it has been reaped (its pid may be reused).
    func signal(_ number: Int32) { process.signal(number) }

    /// Waits for the process to exit and returns its status (or the signal that ended it).
    @discardableResult
    func waitForExit() throws -> Int32 {
        if exited.wait(timeout: .now() + Self.eventTimeout) == .timedOut {
            process.signal(SIGKILL)
            throw ChildError.didNotExit(output: log)
        }
        process.waitUntilExit()
        _ = outputEnded.wait(timeout: .now() + Self.eventTimeout)
        outputEnded.signal()  // a second wait returns at once
        return process.terminationStatus
    }

    /// Kills the server and waits until it is gone, so a server started next on the same
    /// data directory never finds this one still holding the directory's lock.
    deinit {
        guard process.isRunning else { return }  // never started, or already reaped
        process.signal(SIGKILL)
        process.waitUntilExit()
    }

    enum ChildError: Error {
        case notListening(output: String)
        case didNotExit(output: String)
    }
}

/// Runs a command to completion and returns its exit status and standard output.
@discardableResult
func run(_ executable: String, _ arguments: [String], input: String? = nil) throws -> (status: Int32, output: String) {
    try Spawn.run(executable, arguments, input: input)
}

/// Runs the built `hearth` with `arguments` to completion: its exit status, standard
/// output and, kept apart, standard error.
func runHearth(_ arguments: [String], input: String? = nil) throws -> (status: Int32, output: String, error: String) {
    let files = TemporaryDirectory()
    let errorFile = files.path + "/stderr"
    let result = try run("/bin/sh", ["-c", #"err="$1"; shift; exec "$@" 2>"$err""#, "sh", errorFile, HearthProcess.binaryPath] + arguments,
                         input: input)
    return (result.status, result.output, (try? String(contentsOfFile: errorFile, encoding: .utf8)) ?? "")
}

/// With `HEARTH_TEST_STORE=postgres` (scripts/test.sh's second pass of the REST and SSE
/// suites), every server `HearthProcess.serve` starts keeps its data in
/// PostgreSQL: one fresh database per data directory, so a test that restarts a server on
/// its directory finds its data again, as with SQLite.
enum TestStore {
    private static let databases = Mutex<[String: String]>([:])

    static var usesPostgres: Bool { ProcessInfo.processInfo.environment["HEARTH_TEST_STORE"] == "postgres" }

    static func postgresURL(for dataDirectory: String) throws -> String? {
        guard usesPostgres else { return nil }
        if let known = databases.withLock({ $0[dataDirectory] }) { return known }
        let url = try PostgresCluster.shared().makeDatabase()
        databases.withLock { $0[dataDirectory] = url }
        return url
    }
}
