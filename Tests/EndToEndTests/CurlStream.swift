import Foundation
import Synchronization

/// `curl -N` reading a live stream as a child process: its output is collected as it
/// arrives, and a test waits for a piece of text to appear (an event, never a sleep).
final class CurlStream: @unchecked Sendable {  // `process` is set up in init; output is behind a Mutex
    let process = ChildProcess()
    private let output = Mutex<String>("")
    private let changed = DispatchSemaphore(value: 0)
    private let exited = DispatchSemaphore(value: 0)

    /// With `includeHead`, the output starts with the response's head (`curl -i`).
    init(_ url: String, headers: [String] = [], includeHead: Bool = false) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        process.arguments = ["-s", "-N", "-H", "Accept: text/event-stream"] + (includeHead ? ["-i"] : [])
            + headers.flatMap { ["-H", $0] } + [url]
        let pipe = Pipe()
        process.standardOutput = pipe
        let changed = self.changed
        PipeReader.drain(pipe.fileHandleForReading, onData: { [weak self] data in
            self?.output.withLock { $0 += String(decoding: data, as: UTF8.self) }
            changed.signal()
        }, onEnd: { changed.signal() })
        process.terminationHandler = { [exited] _ in exited.signal() }
        try process.run()
    }

    deinit {
        if process.isRunning { process.terminate() }
    }

    var text: String { output.withLock { $0 } }

    /// Waits until the output contains `needle` `count` times; throws after the safety timeout.
    func waitFor(_ needle: String, count: Int = 1) throws {
        while text.components(separatedBy: needle).count - 1 < count {
            if changed.wait(timeout: .now() + HearthProcess.eventTimeout) == .timedOut {
                throw CurlError.failed(status: -1, output: "timed out waiting for \(needle) in: \(text)")
            }
        }
    }

    /// Waits for curl to exit (the server closed the stream); its exit status.
    func waitForExit() throws -> Int32 {
        if exited.wait(timeout: .now() + HearthProcess.eventTimeout) == .timedOut {
            throw CurlError.failed(status: -1, output: "curl did not exit")
        }
        return process.terminationStatus
    }
}
