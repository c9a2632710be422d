import Foundation
import Testing
@testable import HearthServer

/// What a refusal of the data directory's lock says of the other process (issue 24): its
/// command line from /proc, cut at `DataDirectoryLock.maxCommandLineCharacters`.
@Suite struct DataDirectoryLockTests {
    /// A child that waits on its standard input, with `arguments`; ended by closing it.
    static func waiting(_ arguments: [String]) throws -> (Process, Pipe) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "read line", "sh"] + arguments
        let input = Pipe()
        process.standardInput = input
        try process.run()
        return (process, input)
    }

    /// The child's command line once it has become `sh` (Foundation's `Process.run` may
    /// return before the child has exec'd: /proc then shows no command line, or the
    /// parent's). Polled every millisecond; 60 s is a safety net only.
    static func commandLine(ofStarted pid: Int32) throws -> String? {
        let deadline = ContinuousClock.now + .seconds(60)
        while true {
            if let line = DataDirectoryLock.commandLine(of: pid), line.hasPrefix("sh -c read line sh ") { return line }
            try #require(ContinuousClock.now < deadline, "the child never showed its command line")
            usleep(1_000)
        }
    }

    @Test func theOtherProcessIsNamedByItsCommandLineCutToTheLimit() throws {
        let short = try Self.waiting(["serve", "--port", "9000"])
        let long = try Self.waiting([String(repeating: "x", count: DataDirectoryLock.maxCommandLineCharacters)])
        defer {
            for (process, input) in [short, long] {
                try? input.fileHandleForWriting.close()
                process.waitUntilExit()
            }
        }
        let named = try Self.commandLine(ofStarted: short.0.processIdentifier)
        #expect(named == "sh -c read line sh serve --port 9000")
        #expect(DataDirectoryLock.serves(short.0.processIdentifier) == false)  // its first argument is -c
        let cut = try #require(try Self.commandLine(ofStarted: long.0.processIdentifier))
        #expect(cut.count == DataDirectoryLock.maxCommandLineCharacters + 1 && cut.hasSuffix("…") && cut.hasPrefix("sh -c read line sh xxx"))
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
