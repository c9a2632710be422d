import Foundation
import HearthTesting
import Synchronization
import Testing

/// The tests' own child process (`ChildProcess`, posix_spawn instead of Foundation's
/// `Process`): pipes reach their ends, a failed start is an error, a signal ends a child.
@Suite struct ChildProcessTests {
    /// Listeners `processListensNamesOnlyTheListenersOwner` holds at once: their lines in
    /// `/proc/net/tcp` (~150 bytes each) span many reads.
    static let listenersAtOnce = 300

    /// `processListens`, with which the tests wait for a child to bind a port they chose:
    /// only the process holding the listening socket counts, and a bound socket that does
    /// not listen does not. With hundreds of sockets, `/proc/net/tcp` is many reads long,
    /// and a listener far down it is found too.
    @Test func processListensNamesOnlyTheListenersOwner() throws {
        let many = try (0..<Self.listenersAtOnce).map { _ in try bindLoopback(listen: true) }
        defer { for socket in many { close(socket.fd) } }
        #expect(try #require(readWholeFile("/proc/net/tcp")).split(separator: "\n").count > Self.listenersAtOnce)
        // Every tenth: their lines lie all over the table (it is ordered by hash bucket).
        let checked = stride(from: 0, to: many.count, by: 10).map { many[$0].port }
        let missed = checked.filter { !processListens(getpid(), onLoopbackPort: $0) }
        #expect(missed.count == 0, "listeners not found: \(missed.count) of \(checked.count)")
        let listener = try LoopbackListener { _ in }
        defer { listener.stop() }
        #expect(processListens(getpid(), onLoopbackPort: listener.port))
        let other = ChildProcess()
        other.executableURL = URL(fileURLWithPath: "/bin/sleep")
        other.arguments = ["60"]
        try other.run()
        defer { other.signal(SIGKILL); other.waitUntilExit() }
        #expect(!processListens(other.processIdentifier, onLoopbackPort: listener.port))
        let bound = try RefusingPort()
        #expect(!processListens(getpid(), onLoopbackPort: bound.port))
        listener.stop()
        #expect(!processListens(getpid(), onLoopbackPort: listener.port))
    }

    /// A port for a child to bind, free now or held refusing until released, comes from
    /// below the ephemeral range, where no server on port 0 and no outgoing connection can
    /// be given it meanwhile.
    @Test func aFreePortIsBelowTheEphemeralRangeAndFree() throws {
        let low = try #require(ephemeralPortRangeStart())
        try #require(low - freePortFloor >= minimumPortsBelowEphemeralRange, "this kernel's ephemeral range starts at \(low)")
        for _ in 0..<20 {
            let port = try freeLoopbackPort()
            #expect(port >= freePortFloor && port < low)
            let (fd, bound) = try bindLoopback(listen: true, port: port)
            #expect(bound == port)
            close(fd)
        }
        let held = try RefusingPort()
        #expect(held.port >= freePortFloor && held.port < low)
        #expect(!loopbackPortAccepts(held.port))
        #expect((try? bindLoopback(listen: true, port: held.port)) == nil, "the port is held until released")
        held.release()
        let (fd, bound) = try bindLoopback(listen: true, port: held.port)
        #expect(bound == held.port)
        close(fd)
    }

    @Test func aChildWritesToBothPipesAndItsExitStatusIsKept() throws {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "read line; echo \"out $line\"; echo err >&2; exit 3"]
        let (input, output, error) = (Pipe(), Pipe(), Pipe())
        process.standardInput = input
        process.standardOutput = output
        process.standardError = error
        try process.run()
        #expect(process.processIdentifier > 0)
        input.fileHandleForWriting.write(Data("in\n".utf8))
        try input.fileHandleForWriting.close()
        // Ends of file: the parent's copies of the child's ends were closed by run().
        let out = output.fileHandleForReading.readDataToEndOfFile()
        let err = error.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(String(decoding: out, as: UTF8.self) == "out in\n")
        #expect(String(decoding: err, as: UTF8.self) == "err\n")
        #expect(!process.isRunning)
        #expect(process.terminationStatus == 3)
        #expect(process.terminationReason == .exit)
    }

    @Test func theChildGetsItsEnvironmentAndDirectoryAndNoOtherDescriptors() throws {
        let directory = TemporaryDirectory()
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        // Descriptors 0-2 and the one `ls` opens on /proc/self/fd: nothing inherited.
        process.arguments = ["-c", #"echo "$GREETING"; pwd; ls /proc/self/fd | wc -l"#]
        process.environment = ["GREETING": "hello"]
        process.currentDirectoryURL = URL(fileURLWithPath: directory.path)
        let output = Pipe()
        process.standardInput = FileHandle.nullDevice  // 0 open whatever this process's stdin is
        process.standardOutput = output
        let held = Pipe()  // open in this process, not the child's business
        try process.run()
        let lines = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).split(separator: "\n")
        process.waitUntilExit()
        withExtendedLifetime(held) {}
        let resolved = URL(fileURLWithPath: directory.path).resolvingSymlinksInPath().path
        #expect(lines.count == 3)
        #expect(lines.first == "hello")
        #expect(lines.dropFirst().first.map { [directory.path, resolved].contains(String($0)) } == true)
        #expect(lines.last.map { $0.trimmingCharacters(in: .whitespaces) } == "4")
        #expect(process.terminationStatus == 0)
    }

    @Test func aMissingExecutableIsAnErrorNamingIt() {
        let directory = TemporaryDirectory()
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: directory.path + "/no-such-program")
        #expect {
            try process.run()
        } throws: { error in
            (error as? ChildProcessError)?.description.contains(directory.path + "/no-such-program") == true
        }
        #expect(!process.isRunning)
    }

    @Test func terminateEndsAChildWithSIGTERMAndCallsTheHandler() throws {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/bin/sleep")
        process.arguments = ["60"]
        let handled = DispatchSemaphore(value: 0)
        let runningInHandler = Mutex<Bool?>(nil)
        process.terminationHandler = { child in
            runningInHandler.withLock { $0 = child.isRunning }
            handled.signal()
        }
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        #expect(process.isRunning)
        process.terminate()
        process.waitUntilExit()
        #expect(handled.wait(timeout: .now() + .seconds(60)) == .success)
        #expect(runningInHandler.withLock { $0 } == false)
        #expect(process.terminationReason == .uncaughtSignal)
        #expect(process.terminationStatus == SIGTERM)
        process.terminate()  // after the exit: nothing to signal, no error
    }
}
