import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `hearth serve` started with its standard streams closed (`<&- >&- 2>&-`, as a careless
/// supervisor or a shell script can): it fills descriptors 0–2 with `/dev/null` before it
/// opens anything, so its log lines go nowhere instead of into whatever would otherwise
/// have been given those numbers (before: an epoll set as 0, an `eventfd` as 1 and a
/// `timerfd` as 2, all three the I/O loops'), and it serves and stops as usual.
@Suite struct ClosedStandardStreamsEndToEndTests {
    @Test func aServerStartedWithItsStandardStreamsClosedServesWithThemOnDevNull() throws {
        let dir = TemporaryDirectory()
        let port = try freeLoopbackPort()
        let rules = try HearthProcess.writeRules(HearthProcess.openRules, in: dir.path)
        var environment: [String: String] = [:]
        if let url = try TestStore.postgresURL(for: dir.path) { environment["HEARTH_STORE"] = url }
        let child = try HearthProcess(
            arguments: ["serve", "--port", String(port), "--data-dir", dir.path, "--rules", rules],
            dataDirectory: dir.path, environment: environment,
            launcher: ["/bin/sh", "-c", #"exec "$@" <&- >&- 2>&-"#, "sh"])
        let pid = child.process.processIdentifier
        // No log line can say it listens (its standard error is closed): its socket does.
        try pollUntil("the server listening on port \(port)") {
            guard child.process.isRunning else { throw ChildFailed(status: child.process.terminationStatus) }
            return processListens(pid, onLoopbackPort: port)
        }
        for fd in 0...2 {
            let target = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(fd)")
            #expect(target == "/dev/null", "descriptor \(fd)")
        }
        let base = "http://127.0.0.1:\(port)"
        #expect(try curl("PUT", base + "/users/alice/favorites/oslo.json", body: #"{"note":"fjord"}"#).status == 200)
        let read = try curl("GET", base + "/users/alice/favorites/oslo/note.json")
        #expect(read.status == 200 && read.body == #""fjord""#)
        #expect(try curl("GET", base + "/missing.json").status == 200)  // a line for the access log, dropped
        child.signal(SIGTERM)
        #expect(try child.waitForExit() == 0)
        #expect(child.log.isEmpty)  // nothing reached the test's pipe: all three were closed
    }

    struct ChildFailed: Error, CustomStringConvertible {
        let status: Int32
        var description: String { "hearth exited (status \(status)) before it listened" }
    }
}
