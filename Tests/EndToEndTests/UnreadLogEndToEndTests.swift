import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `hearth serve` whose log reader is gone: its standard output and error are a pipe
/// whose read end was closed before it started (a log collector that stopped, `hearth
/// serve 2>&1 | head -1`). A write there is an EPIPE error, which the log drops, and never
/// the SIGPIPE signal that would end the process, from its first line on: the HTTP
/// server ignores the signal once it listens, but lines are written before that too.
@Suite struct UnreadLogEndToEndTests {
    /// The child's arguments, and a pipe for its output with no reader left.
    static func spawn(_ arguments: [String], dir: TemporaryDirectory) throws -> ChildProcess {
        let child = ChildProcess()
        child.executableURL = URL(fileURLWithPath: HearthProcess.binaryPath)
        child.arguments = arguments
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("HEARTH_") }
        if let url = try TestStore.postgresURL(for: dir.path) { environment["HEARTH_STORE"] = url }
        child.environment = environment
        let pipe = Pipe()
        try pipe.fileHandleForReading.close()
        child.standardOutput = pipe
        child.standardError = pipe
        try child.run()
        return child
    }

    /// A start that fails (its rules are not JSON) logs why and exits with status 1: the
    /// log's write fails, and the process is not ended by a signal (before: SIGPIPE, when
    /// the log was flushed on the way out).
    @Test func aServerThatCannotStartExitsWithItsStatusWhenNoOneReadsItsLog() throws {
        let dir = TemporaryDirectory()
        let rules = try HearthProcess.writeRules("{ not json", in: dir.path)
        let child = try Self.spawn(["serve", "--port", "0", "--data-dir", dir.path, "--rules", rules], dir: dir)
        child.waitUntilExit()
        #expect(child.terminationReason == .exit, "ended by signal \(child.terminationStatus)")
        #expect(child.terminationStatus == 1)
    }

    /// A server that starts serves, logging each request into the dead pipe, and stops on
    /// SIGTERM with status 0. (Without the early ignore this fails only when a line is
    /// written before the HTTP server listens, as it was under `strace`, which slows the
    /// start past the log's 50 ms flush; the test above fails every time.)
    @Test func aServerWhoseLogReaderIsGoneServesAndStops() throws {
        let dir = TemporaryDirectory()
        let port = try freeLoopbackPort()
        let rules = try HearthProcess.writeRules(HearthProcess.openRules, in: dir.path)
        let child = try Self.spawn(["serve", "--port", String(port), "--data-dir", dir.path, "--rules", rules], dir: dir)
        defer { if child.isRunning { child.signal(SIGKILL); child.waitUntilExit() } }
        // No log line can say it listens (nobody reads them): its socket does.
        try pollUntil("the server listening on port \(port)") {
            guard child.isRunning else { throw Ended(reason: child.terminationReason, status: child.terminationStatus) }
            return processListens(child.processIdentifier, onLoopbackPort: port)
        }
        let base = "http://127.0.0.1:\(port)"
        #expect(try curl("PUT", base + "/users/alice/favorites/oslo.json", body: #"{"note":"fjord"}"#).status == 200)
        let read = try curl("GET", base + "/users/alice/favorites/oslo/note.json")
        #expect(read.status == 200 && read.body == #""fjord""#)
        child.signal(SIGTERM)
        child.waitUntilExit()
        #expect(child.terminationReason == .exit, "ended by signal \(child.terminationStatus)")
        #expect(child.terminationStatus == 0)
    }

    struct Ended: Error, CustomStringConvertible {
        let reason: ChildProcess.TerminationReason
        let status: Int32
        var description: String { "hearth ended (\(reason), status \(status)) before it listened" }
    }
}
