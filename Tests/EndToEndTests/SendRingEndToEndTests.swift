import Foundation
import Testing

/// The built binary hands a push's sends to the kernel through io_uring where the kernel
/// allows it, sends one `send()` per connection where it refuses (a seccomp filter as
/// Docker's default: `Python/deny_io_uring.py` starts the binary under one) or where
/// `HEARTH_BATCHED_SENDS=false` says so, says at start which, and in every case each
/// listener gets every push.
@Suite struct SendRingEndToEndTests {
    let dir = TemporaryDirectory()

    enum Mode: String, CaseIterable, CustomTestStringConvertible {
        case kernelAllows, seccompRefuses, turnedOff
        var testDescription: String { rawValue }
    }

    @Test(arguments: Mode.allCases)
    func everyListenerGetsEveryPush(mode: Mode) throws {
        var environment: [String: String] = [:]
        if mode == .turnedOff { environment["HEARTH_BATCHED_SENDS"] = "false" }
        if let url = try TestStore.postgresURL(for: dir.path) { environment["HEARTH_STORE"] = url }
        let launcher = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Python/deny_io_uring.py").path
        let server = try HearthProcess(
            arguments: ["serve", "--port", "0", "--data-dir", dir.path,
                        "--rules", try HearthProcess.writeRules(HearthProcess.openRules, in: dir.path)],
            dataDirectory: dir.path, environment: environment,
            launcher: mode == .seccompRefuses ? ["/usr/bin/python3", launcher] : [])
        try server.waitUntilListening()
        let line = try #require(server.log.split(separator: "\n").first { $0.contains("pushes: ") })
        switch mode {
        case .kernelAllows where ioUringAllowed():
            #expect(line.contains("info") && line.contains("pushes: through io_uring, up to 256 sends per system call"), "\(line)")
        case .kernelAllows:
            #expect(line.contains("notice") && line.contains("io_uring is unavailable"), "\(line)")
        case .seccompRefuses:
            #expect(line.contains("notice") && line.contains(
                "pushes: one send() per connection, io_uring is unavailable: io_uring_setup failed: Operation not permitted (errno 1)"),
                "\(line)")
        case .turnedOff:
            #expect(line.contains("info") && line.contains("pushes: one send() per connection (batchedSends is false)"), "\(line)")
        }
        let streams = try (0..<3).map { _ in try CurlStream(server.baseURL + "/room.json") }
        for stream in streams { try stream.waitFor("event: put\n") }
        for index in 0..<5 {
            #expect(try curl("PUT", server.baseURL + "/room/m\(index).json", body: "\"\(mode.rawValue) \(index)\"").status == 200)
        }
        for stream in streams {
            try stream.waitFor("event: put\n", count: 6)
            for index in 0..<5 { #expect(stream.text.contains("\"\(mode.rawValue) \(index)\"")) }
        }
        server.signal(SIGTERM)
        #expect(try server.waitForExit() == 0)
    }
}
