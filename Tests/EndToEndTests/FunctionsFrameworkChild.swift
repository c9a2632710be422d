import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The open-source Functions Framework (`functions-framework`, installed beside the tests'
/// Python) serving `target` from one of `Python/`'s scripts, as a child process on
/// 127.0.0.1:`port`, its output kept in `<directory>/functions-framework.log`.
///
/// `start` returns once the child itself listens on the port. The port came free from
/// `freeLoopbackPort()` (or a released `RefusingPort`), so until then a server of a test
/// running beside, binding port 0, could be given it: the framework would then exit, unable
/// to bind, and the triggers would post to that server. Checking the listening socket's
/// owner (not just that the port accepts) tells the two apart, and a framework that exited
/// fails the test at once with its log instead of as missing calls minutes later.
enum FunctionsFrameworkChild {
    /// The safety net for the framework's start (Python importing firebase-functions takes
    /// seconds on a loaded machine).
    static let startTimeout: Duration = .seconds(120)

    /// `log`: where the output goes (default `<directory>/functions-framework.log`).
    /// `droppingInherited`: a prefix of variables not passed on from the tests' own
    /// environment (`FIREBASE_`, so that only `environment`'s configuration reaches
    /// firebase-admin).
    static func start(_ process: ChildProcess, python: String, script: String, target: String, signatureType: String,
                      port: Int, environment: [String: String], directory: String, log: String? = nil,
                      droppingInherited prefix: String? = nil) throws -> String {
        let log = log ?? directory + "/functions-framework.log"
        guard FileManager.default.createFile(atPath: log, contents: nil), let output = FileHandle(forWritingAtPath: log) else {
            throw LiveClientError("cannot create \(log)")
        }
        process.executableURL = URL(fileURLWithPath: python).deletingLastPathComponent().appendingPathComponent("functions-framework")
        process.arguments = ["--source", script, "--target", target, "--signature-type", signatureType,
                             "--host", "127.0.0.1", "--port", String(port)]
        let inherited = ProcessInfo.processInfo.environment.filter { variable in
            prefix.map { variable.key.hasPrefix($0) } != true
        }
        process.environment = inherited.merging(environment) { _, new in new }
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let deadline = ContinuousClock.now + startTimeout
        while !processListens(process.processIdentifier, onLoopbackPort: port) {
            guard process.isRunning else {
                process.waitUntilExit()
                throw LiveClientError("the Functions Framework exited (status \(process.terminationStatus)) before it listened on port \(port); its log:\n\(tail(of: log))")
            }
            guard ContinuousClock.now < deadline else {
                throw LiveClientError("the Functions Framework not listening on port \(port) after \(startTimeout); its log:\n\(tail(of: log))")
            }
            Thread.sleep(forTimeInterval: 0.02)
        }
        return log
    }

    /// The end of a log, for a failure's message.
    static func tail(of path: String, characters: Int = 4_000) -> String {
        let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? "(no log at \(path))"
        return String(text.suffix(characters))
    }
}
