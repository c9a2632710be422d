import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// One server per data directory, and what replaces its data runs
/// alone (`DataDirectoryLock`), with the built binary: a second server and an import or a
/// restore beside a server are refused naming the other process's pid; account, key and
/// administrator commands and the reading ones (export, backup) run beside a server; a
/// server killed with SIGKILL leaves no lock; a running import keeps a server out.
@Suite struct DataDirectoryLockEndToEndTests {
    let dir = TemporaryDirectory()

    /// How long the test waits for the import to hold its lock (a safety net only).
    static let lockWaitSeconds = 60.0

    func hearth(_ arguments: [String], input: String? = nil) throws -> (status: Int32, output: String, error: String) {
        try runHearth(arguments + ["--data-dir", dir.path], input: input)
    }

    @Test func aSecondServerIsRefusedNamingTheFirst() throws {
        let first = try HearthProcess.serve(dataDirectory: dir.path)
        #expect(try curl("PUT", first.baseURL + "/a.json", body: "1").status == 200)
        let second = try HearthProcess(arguments: ["serve", "--port", "0", "--data-dir", dir.path, "--rules", dir.path + "/rules.json"],
                                       dataDirectory: dir.path)
        #expect(try second.waitForExit() == 1)
        let pid = first.process.processIdentifier
        #expect(second.log.contains("data directory \(dir.path) is already served by another Hearth process (pid \(pid): hearth serve)"), "\(second.log)")
        #expect(!second.log.contains("listening on"))
        // The first one serves on, its data untouched.
        #expect(try curl("PUT", first.baseURL + "/a.json", body: "2").status == 200)
        #expect(try curl("GET", first.baseURL + "/a.json").body == "2")
        first.signal(SIGTERM)
        #expect(try first.waitForExit() == 0)
    }

    @Test func besideAServerAccountCommandsRunAndDataReplacersAreRefused() throws {
        let server = try HearthProcess.serve(dataDirectory: dir.path)
        let pid = server.process.processIdentifier
        #expect(try curl("PUT", server.baseURL + "/a.json", body: "1").status == 200)
        let refusal = "Error: Data directory \(dir.path) is served by a running Hearth server (pid \(pid): hearth serve)"

        let imported = try hearth(["import", "-"], input: #"{"a":2}"#)
        #expect(imported.status == 1 && imported.error.contains(refusal), "\(imported.error)")
        let backup = dir.path + "-backup"
        defer { try? FileManager.default.removeItem(atPath: backup) }
        #expect(try hearth(["backup", backup]).status == 0)
        let restored = try hearth(["restore", backup, "--force"])
        #expect(restored.status == 1 && restored.error.contains(refusal), "\(restored.error)")
        #expect(try curl("GET", server.baseURL + "/a.json").body == "1")

        // Writers of accounts, keys and administrators run beside it; so do the readers.
        let added = try hearth(["users", "add", "--email", "op@example.com"], input: "s3cret-pw\n")
        #expect(added.status == 0, "\(added.error)")
        #expect(try hearth(["users", "disable", added.output.trimmingCharacters(in: .whitespacesAndNewlines)]).status == 0)
        #expect(try hearth(["admins", "add", "--email", "ops@example.com"], input: "a long admin password\n").status == 0)
        #expect(try hearth(["keys", "rotate"]).status == 0)
        #expect(try hearth(["export"]).output.contains(#""a":1"#))
        #expect(try hearth(["users", "list"]).output.contains("op@example.com"))
        server.signal(SIGTERM)
        #expect(try server.waitForExit() == 0)

        // With the server stopped, the import runs.
        #expect(try hearth(["import", "-"], input: #"{"a":3}"#).status == 0)
    }

    @Test func aServerKilledWithSIGKILLLeavesNoLock() throws {
        let server = try HearthProcess.serve(dataDirectory: dir.path)
        #expect(try curl("PUT", server.baseURL + "/a.json", body: "1").status == 200)
        server.signal(SIGKILL)
        #expect(try server.waitForExit() != 0)
        let again = try HearthProcess.serve(dataDirectory: dir.path)
        #expect(try curl("GET", again.baseURL + "/a.json").body == "1")
        again.signal(SIGTERM)
        #expect(try again.waitForExit() == 0)
    }

    @Test func aRunningImportKeepsAServerAndAccountWritersOut() throws {
        try FileManager.default.createDirectory(atPath: dir.path, withIntermediateDirectories: true)
        #expect(try hearth(["users", "list"]).status == 0)
        let importer = try HeldInput(HearthProcess.binaryPath, ["import", "-", "--data-dir", dir.path])
        defer { importer.finish(nil) }
        // The import holds the data byte once it has started reading its input.
        let deadline = Date().addingTimeInterval(Self.lockWaitSeconds)
        while Self.holder(of: dir.path + "/hearth.lock", byte: 1) != importer.pid {
            try #require(Date() < deadline, "the import never held the data directory")
            usleep(10_000)
        }
        let refusal = "is in use by another Hearth process (pid \(importer.pid): hearth import)"
        let rules = try HearthProcess.writeRules(HearthProcess.openRules, in: dir.path)
        let server = try HearthProcess(arguments: ["serve", "--port", "0", "--data-dir", dir.path, "--rules", rules], dataDirectory: dir.path)
        #expect(try server.waitForExit() == 1)
        #expect(server.log.contains(refusal), "\(server.log)")
        let added = try hearth(["users", "add", "--email", "op@example.com"], input: "s3cret-pw\n")
        #expect(added.status == 1 && added.error.contains(refusal), "\(added.error)")

        #expect(importer.finish(#"{"imported":true}"#) == 0)
        #expect(try hearth(["export"]).output == #"{"imported":true}"# + "\n")
    }

    /// The pid holding a lock on `byte` of `path` that would conflict with an exclusive
    /// one (`F_GETLK`: only asks, takes nothing), or nil.
    static func holder(of path: String, byte: Int) -> Int32? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var probe = flock()
        probe.l_type = Int16(F_WRLCK)
        probe.l_whence = Int16(SEEK_SET)
        probe.l_start = off_t(byte)
        probe.l_len = 1
        guard fcntl(fd, F_GETLK, &probe) == 0, probe.l_type != Int16(F_UNLCK) else { return nil }
        return probe.l_pid
    }
}

/// A child whose standard input stays open until `finish`: an import that has started and
/// waits for the rest of its file.
final class HeldInput {
    private let process = ChildProcess()
    private let input = Pipe()
    var pid: pid_t { process.processIdentifier }

    init(_ executable: String, _ arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardInput = input
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
    }

    /// Writes `text` (nil: nothing), closes the input and returns the exit status (128 +
    /// the signal's number if one ended it).
    @discardableResult
    func finish(_ text: String?) -> Int32 {
        if process.isRunning, let text {
            let bytes = Array(text.utf8)
            _ = bytes.withUnsafeBytes { write(input.fileHandleForWriting.fileDescriptor, $0.baseAddress, $0.count) }
        }
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
        return process.terminationReason == .exit ? process.terminationStatus : 128 + process.terminationStatus
    }
}
