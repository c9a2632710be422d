import Foundation
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `hearth serve` whose standard error is a pipe nobody reads for a while (a stalled log
/// collector). The access log writes a line per request; once the pipe's 64 KiB were full,
/// the next thread to log blocked in `write` with its request, and then every other: the
/// server stopped answering after ~400 requests. Now only the log's own queue waits; the
/// lines wait up to `LogOutput.maxHeldBytes` (1 MiB), the rest are dropped and counted,
/// and a line says how many once the pipe is read again.
@Suite struct StalledLogReaderEndToEndTests {
    /// Requests sent while nobody reads: their access lines (~160 B each) are well past
    /// the pipe's 64 KiB and the 1 MiB held.
    static let requests = 15_000

    /// What the server's standard error is: a pipe (`LogOutput.pipeChunkBytes` a write),
    /// or a stream socket, as the journal gives a systemd service
    /// (`LogOutput.socketChunkBytes` a write).
    enum LogChannel: CaseIterable, Sendable {
        case pipe, socket

        /// What the child gets as its standard error, and the end the test reads.
        func make() throws -> (child: any ChildProcessStream, reader: FileHandle) {
            switch self {
            case .pipe:
                let pipe = Pipe()
                return (pipe, pipe.fileHandleForReading)
            case .socket:
                var ends: [Int32] = [0, 0]
                guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends) == 0 else {
                    throw Failure("socketpair: errno \(errno)")
                }
                return (SocketEnd(handle: FileHandle(fileDescriptor: ends[1], closeOnDealloc: true)),
                        FileHandle(fileDescriptor: ends[0], closeOnDealloc: true))
            }
        }
    }

    /// One end of a socket pair as a child's stream: the test's copy is closed once the
    /// child has it, so the other end reads the end of file when the child exits.
    struct SocketEnd: ChildProcessStream {
        let handle: FileHandle
        func childEnd(forInput: Bool) -> (descriptor: Int32, parentCopy: FileHandle?) { (handle.fileDescriptor, handle) }
    }

    /// `hearth serve` on a free port with its standard error into `stderr`, which the
    /// caller reads when it chooses; returns once it listens.
    static func start(in dir: TemporaryDirectory, stderr: any ChildProcessStream) throws -> (server: ChildProcess, port: Int) {
        let port = try freeLoopbackPort()
        let rules = try HearthProcess.writeRules(HearthProcess.openRules, in: dir.path)
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("HEARTH_") }
        if let url = try TestStore.postgresURL(for: dir.path) { environment["HEARTH_STORE"] = url }
        let server = ChildProcess()
        server.executableURL = URL(fileURLWithPath: HearthProcess.binaryPath)
        server.arguments = ["serve", "--port", String(port), "--data-dir", dir.path, "--rules", rules]
        server.environment = environment
        server.standardOutput = FileHandle.nullDevice
        server.standardError = stderr
        try server.run()
        try pollUntil("the server listening on port \(port)") {
            guard server.isRunning else { throw Failure("hearth exited (status \(server.terminationStatus)) before it listened") }
            return processListens(server.processIdentifier, onLoopbackPort: port)
        }
        return (server, port)
    }

    /// `requests` GETs of /healthz, one after another on one connection (curl's URL
    /// range): curl's status and how many answers came. Before, it hung at ~900;
    /// --max-time ends that transfer and --fail-early the rest.
    static func sendRequests(to port: Int) throws -> (status: Int32, answered: Int) {
        let sent = try run("/usr/bin/curl", ["-s", "-S", "--fail-early", "--max-time", "120",
                                             "http://127.0.0.1:\(port)/healthz?n=[1-\(requests)]"])
        return (sent.status, sent.output.components(separatedBy: #"{"status":"ok"}"#).count - 1)
    }

    @Test(arguments: LogChannel.allCases)
    func aLogReaderThatStopsReadingDoesNotStopTheServer(channel: LogChannel) throws {
        let dir = TemporaryDirectory()
        let (stderr, reader) = try channel.make()  // not read until the requests are answered
        let (server, port) = try Self.start(in: dir, stderr: stderr)
        defer { if server.isRunning { server.signal(SIGKILL); server.waitUntilExit() } }
        let sent = try Self.sendRequests(to: port)
        #expect(sent.status == 0)
        #expect(sent.answered == Self.requests)

        // Now read: what waited comes out, then the count of what was dropped.
        let log = Mutex("")
        let ended = DispatchSemaphore(value: 0)
        PipeReader.drain(reader, onData: { data in
            log.withLock { $0 += String(decoding: data, as: UTF8.self) }
        }, onEnd: { ended.signal() })
        try pollUntil("the count of dropped lines in the log") {
            log.withLock { $0.contains("log lines dropped") }
        }
        server.signal(SIGTERM)
        server.waitUntilExit()
        #expect(server.terminationStatus == 0)
        #expect(ended.wait(timeout: .now() + .seconds(60)) == .success)
        let text = log.withLock { $0 }
        let notice = try #require(text.firstMatch(of: /(\d+) log lines dropped/))
        let dropped = try #require(Int(notice.1))
        let written = text.components(separatedBy: "GET /healthz").count - 1
        #expect(dropped > 0)
        #expect(written > 0)
        #expect(written + dropped == Self.requests)  // each request's line written or counted
        #expect(text.contains("received signal"))  // the log goes on after the notice
    }

    /// At exit the log waits `LogOutput.exitFlushSeconds` for a reader that never comes
    /// back, then drops what is left: the server stops instead of hanging in `write`.
    @Test func aServerWhoseLogReaderNeverReadsAgainStillStops() throws {
        let dir = TemporaryDirectory()
        let stderr = Pipe()  // never read
        let (server, port) = try Self.start(in: dir, stderr: stderr)
        defer { if server.isRunning { server.signal(SIGKILL); server.waitUntilExit() } }
        let sent = try Self.sendRequests(to: port)
        #expect(sent.status == 0 && sent.answered == Self.requests)
        server.signal(SIGTERM)
        try pollUntil("the server to exit after SIGTERM") { !server.isRunning }
        server.waitUntilExit()
        #expect(server.terminationStatus == 0)
        withExtendedLifetime(stderr) {}
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
