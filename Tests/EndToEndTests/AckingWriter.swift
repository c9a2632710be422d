import Foundation
import Synchronization

/// The Python client of `CrashEndToEndTests.writer` against a server: it PUTs without
/// pause and prints `ack N` for each acknowledged write. `waitFor(acks:)` waits (on output,
/// not time) until at least that many are acknowledged.
final class AckingWriter: @unchecked Sendable {  // `process` is set up in init; the rest is behind Mutexes
    private let process = ChildProcess()
    private let acks = Mutex<[Int]>([])
    private let buffer = Mutex<String>("")
    private let changed = DispatchSemaphore(value: 0)

    init(port: Int) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", CrashEndToEndTests.writer, String(port)]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        let changed = self.changed
        PipeReader.drain(out.fileHandleForReading, onData: { [weak self] data in
            guard let self else { return }
            let lines: [Substring] = self.buffer.withLock { text in
                text += String(decoding: data, as: UTF8.self)
                guard let last = text.lastIndex(of: "\n") else { return [] }
                let complete = text[...last].split(separator: "\n")
                text = String(text[text.index(after: last)...])
                return complete
            }
            self.acks.withLock { acks in
                for line in lines where line.hasPrefix("ack ") { acks.append(Int(line.dropFirst(4))!) }
            }
            changed.signal()
        }, onEnd: { changed.signal() })
        try process.run()
    }

    deinit {
        if process.isRunning { process.terminate() }
    }

    /// The writes acknowledged so far.
    var acknowledged: [Int] { acks.withLock { $0 } }

    /// True once `count` writes are acknowledged; false after the safety timeout.
    func waitFor(acks count: Int, timeout: DispatchTimeInterval = .seconds(120)) -> Bool {
        let deadline = DispatchTime.now() + timeout
        while acknowledged.count < count {
            if changed.wait(timeout: deadline) == .timedOut { return false }
        }
        return true
    }

    /// Stops the writer. SIGKILL: children of the test process inherit its blocked SIGTERM.
    func stop() {
        process.signal(SIGKILL)
        process.waitUntilExit()
    }

    /// Waits for the writer to end on its own (its server went away).
    func waitUntilExit() {
        process.waitUntilExit()
    }
}
