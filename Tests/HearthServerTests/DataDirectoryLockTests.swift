import Foundation
import HearthTesting
import Testing
@testable import HearthServer

/// What a refusal of the data directory's lock says of the other process: its
/// program and first argument from /proc (never the flags after, which may hold secrets),
/// cut at `DataDirectoryLock.maxCommandLineCharacters`.
@Suite struct DataDirectoryLockTests {
    /// `sleep` for a minute, its first argument `seconds` (leading zeros allowed), then
    /// `rest`; ended by the test.
    static func sleeping(_ seconds: String, _ rest: [String] = []) throws -> ChildProcess {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/bin/sleep")
        process.arguments = [seconds] + rest
        try process.run()
        return process
    }

    /// The child's command line once /proc shows it. `ChildProcess.run` returns once the
    /// child has exec'd, but the kernel releases a vfork parent when the child switches to
    /// the new program's memory, before it records the new program's arguments: /proc can
    /// show an empty command line for that moment (CI saw it once). Polled every
    /// millisecond; 60 s is a safety net only.
    static func commandLine(ofStarted pid: Int32) throws -> String? {
        let deadline = ContinuousClock.now + .seconds(60)
        while true {
            if let line = DataDirectoryLock.commandLine(of: pid), line.hasPrefix("sleep ") { return line }
            try #require(ContinuousClock.now < deadline, "the child never showed its command line")
            usleep(1_000)
        }
    }

    @Test func theOtherProcessIsNamedByItsCommandLineCutToTheLimit() throws {
        let short = try Self.sleeping("60", ["1"])
        let long = try Self.sleeping(String(repeating: "0", count: DataDirectoryLock.maxCommandLineCharacters) + "60")
        defer {
            for process in [short, long] {
                process.terminate()
                process.waitUntilExit()
            }
        }
        // The program and its first argument; what follows (flags, maybe secrets) is not repeated.
        #expect(try Self.commandLine(ofStarted: short.processIdentifier) == "sleep 60")
        #expect(DataDirectoryLock.serves(short.processIdentifier) == false)
        let cut = try #require(try Self.commandLine(ofStarted: long.processIdentifier))
        #expect(cut.count == DataDirectoryLock.maxCommandLineCharacters + 1 && cut.hasSuffix("…") && cut.hasPrefix("sleep 000"))
        #expect(DataDirectoryLock.commandLine(of: 0) == nil)
    }

    @Test func aRefusalSaysWhoHoldsTheDirectoryAndWhatToDo() {
        let served = DataDirectoryLockError.inUse(directory: "d", pid: 42, command: "hearth serve", holderServes: true, wanted: .server)
        #expect(served.description == "data directory d is already served by another Hearth process (pid 42: hearth serve): one data directory has one server; stop that one first, or give this one another --data-dir")
        let busy = DataDirectoryLockError.inUse(directory: "d", pid: 42, command: nil, holderServes: true, wanted: .replacesData)
        #expect(busy.description == "data directory d is served by a running Hearth server (pid 42); stop it first")
        let gone = DataDirectoryLockError.inUse(directory: "d", pid: 0, command: nil, holderServes: false, wanted: .writesAccounts)
        #expect(gone.description == "data directory d is in use by another Hearth process (a process that has just ended); wait for it to finish or stop it first")
    }
}
