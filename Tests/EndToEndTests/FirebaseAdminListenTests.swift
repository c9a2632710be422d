import Foundation
import Testing

/// The official Python firebase-admin SDK's `db.reference(...).listen()` against the built
/// binary, in emulator mode (docs/protocol/admin-client.md §1, §5, §6). The SDK is driven
/// by `Python/admin_listen.py`, run with `$HEARTH_PYTHON` (set by scripts/test.sh).
@Suite struct FirebaseAdminListenTests {
    let dir = TemporaryDirectory()

    static let denyAllRules = #"{"rules": {".read": false, ".write": false}}"#

    /// The SDK's `registration.close()` only returns once its listener thread reads another
    /// byte from the stream (closing the response does not wake a blocked read), so the
    /// server sends keep-alives every second instead of every 30 s to keep each run short.
    static let fastKeepAlive = ["HEARTH_STREAM_KEEPALIVE_SECONDS": "1"]

    /// Seed, set of a child, multi-path update, delete: the callback sees the initial
    /// snapshot and then each change with a path relative to the listened location.
    /// With `--accept-emulator-owner`, `Bearer owner` is admin, so deny-all rules do not matter.
    @Test(arguments: [HearthProcess.openRules, Self.denyAllRules])
    func listenSeesEveryChange(rules: String) throws {
        let python = try pythonInterpreter()
        let server = try HearthProcess(
            arguments: ["serve", "--port", "0", "--data-dir", dir.path,
                        "--rules", try HearthProcess.writeRules(rules, in: dir.path), "--accept-emulator-owner",
                        // The driver's databaseURL names demo-proj's default database.
                        "--project-id", "demo-proj"],
            dataDirectory: dir.path, environment: Self.fastKeepAlive)
        try server.waitUntilListening()

        let result = try runDriver(python, "changes", port: server.port)
        #expect(result.status == 0, "driver failed: \(result.stderr)")
        let expected = [
            #"{"event_type":"put","path":"/","data":{"f1":{"name":"Oslo","stars":5},"f2":{"name":"Rome","stars":4}}}"#,
            #"{"event_type":"put","path":"/f3","data":{"name":"Lima","stars":3}}"#,
            #"{"event_type":"patch","path":"/","data":{"f1/stars":2,"f2":null}}"#,
            #"{"event_type":"put","path":"/f1","data":null}"#,
        ]
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.map { json($0) } == expected.map { json($0) }, "driver output:\n\(result.stdout)\n\(result.stderr)")
        #expect(try curl("GET", server.baseURL + "/users/alice/favorites.json", headers: ["Authorization: Bearer owner"]).body
            == #"{"f3":{"name":"Lima","stars":3}}"#)

        server.signal(SIGTERM)
        #expect(try server.waitForExit() == 0)
    }

    /// Without `--accept-emulator-owner`, `Bearer owner` is not a credential: the stream
    /// request gets 401 (three times: google-auth retries 401s) and `listen()` itself raises.
    @Test func listenWithoutAdminCredentialRaises() throws {
        let python = try pythonInterpreter()
        let server = try HearthProcess.serve(dataDirectory: dir.path, rules: Self.denyAllRules, environment: Self.fastKeepAlive)

        let result = try runDriver(python, "denied", port: server.port)
        #expect(result.status == 3, "listen() did not raise: \(result.stdout)\(result.stderr)")
        #expect(json(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
            == json(#"{"error":"UnauthenticatedError","message":"Invalid auth token"}"#))

        server.signal(SIGTERM)
        #expect(try server.waitForExit() == 0)
    }
}

/// What one run of the Python driver printed.
struct DriverResult {
    var status: Int32
    var stdout: String
    var stderr: String
}

/// The virtualenv interpreter with firebase-admin (scripts/python-env.sh).
func pythonInterpreter() throws -> String {
    try #require(ProcessInfo.processInfo.environment["HEARTH_PYTHON"], "run scripts/test.sh (HEARTH_PYTHON not set)")
}

/// Runs `Python/<script> <mode>` with `python` in emulator mode against `127.0.0.1:port`.
/// The drivers time out their own waits (admin_listen.py: 20 s each, 60 s in all;
/// admin_database.py: 20 s per request, 90 s in all); the kill here after two minutes is only
/// a safety net so a wedged interpreter cannot hang the suite.
func runDriver(_ python: String, _ mode: String, port: Int, script: String = "admin_listen.py") throws -> DriverResult {
    try runPythonDriver(python, script: script, arguments: [mode],
                        environment: ["FIREBASE_DATABASE_EMULATOR_HOST": "127.0.0.1:\(port)"])
}

/// Runs `Python/<script> <arguments…>` with `python`, with `environment` merged into ours
/// (nil removes a variable); collects stdout and stderr.
func runPythonDriver(_ python: String, script: String, arguments: [String], environment overrides: [String: String?]) throws -> DriverResult {
    let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Python").appendingPathComponent(script).path
    let process = ChildProcess()
    process.executableURL = URL(fileURLWithPath: python)
    process.arguments = [script] + arguments
    var env = ProcessInfo.processInfo.environment
    for (name, value) in overrides { env[name] = value }
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    process.environment = env
    let out = Pipe(), err = Pipe()
    process.standardOutput = out
    process.standardError = err
    process.standardInput = FileHandle.nullDevice
    let exited = DispatchSemaphore(value: 0)
    process.terminationHandler = { _ in exited.signal() }
    try process.run()

    // Drain both pipes concurrently so neither can fill up and block the child.
    nonisolated(unsafe) var errData = Data()
    let errDone = DispatchSemaphore(value: 0)
    Thread.detachNewThread {
        errData = err.fileHandleForReading.readDataToEndOfFile()
        errDone.signal()
    }
    let timer = DispatchWorkItem { process.signal(SIGKILL) }
    DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(120), execute: timer)
    let outData = out.fileHandleForReading.readDataToEndOfFile()
    errDone.wait()
    exited.wait()
    timer.cancel()
    process.waitUntilExit()
    return DriverResult(
        status: process.terminationStatus,
        stdout: String(decoding: outData, as: UTF8.self),
        stderr: String(decoding: errData, as: UTF8.self))
}
