import Foundation
import Synchronization

/// `Python/smtp_sink.py` (aiosmtpd) as a child process: a real SMTP server on loopback
/// whose received mail the test reads as it arrives (one JSON line each), not by polling.
final class SMTPSink {
    struct Mail {
        var to: [String]
        var data: String

        /// The `oobCode` of the link in the mail.
        var oobCode: String? {
            guard let range = data.range(of: "oobCode=") else { return nil }
            return String(data[range.upperBound...].prefix { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })
        }
    }

    let process = ChildProcess()
    private let input = Pipe()
    private let lines: Lines
    private let arrived = DispatchSemaphore(value: 0)

    /// The lines read so far (shared with the pipe's reader).
    final class Lines: Sendable {
        let value = Mutex<[String]>([])
    }
    let port: Int

    init(python: String, arguments: [String] = []) throws {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Python/smtp_sink.py").path
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [script] + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardInput = input
        process.standardError = FileHandle.nullDevice
        try process.run()
        let lines = Lines()
        self.lines = lines
        let portLine = DispatchSemaphore(value: 0)
        let buffer = Mutex<String>("")
        let arrived = self.arrived
        PipeReader.drain(output.fileHandleForReading, onData: { [lines, arrived] data in
            let complete: [String] = buffer.withLock { text in
                text += String(decoding: data, as: UTF8.self)
                var found: [String] = []
                while let newline = text.firstIndex(of: "\n") {
                    found.append(String(text[..<newline]))
                    text = String(text[text.index(after: newline)...])
                }
                return found
            }
            for line in complete {
                lines.value.withLock { $0.append(line) }
                if line.hasPrefix("port ") { portLine.signal() } else { arrived.signal() }
            }
        }, onEnd: { arrived.signal(); portLine.signal() })
        guard portLine.wait(timeout: .now() + .seconds(30)) == .success,
              let line = lines.value.withLock({ $0.first { $0.hasPrefix("port ") } }), let port = Int(line.dropFirst(5)) else {
            process.terminate()
            throw SinkError(description: "smtp_sink.py did not start")
        }
        self.port = port
    }

    struct SinkError: Error, CustomStringConvertible { let description: String }

    /// The next mail received (waiting for it as it arrives; 60 s safety net).
    func nextMail() throws -> Mail {
        guard arrived.wait(timeout: .now() + .seconds(60)) == .success,
              let line = lines.value.withLock({ lines -> String? in
                  guard let index = lines.firstIndex(where: { !$0.hasPrefix("port ") }) else { return nil }
                  return lines.remove(at: index)
              }),
              let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
            throw SinkError(description: "no mail arrived")
        }
        return Mail(to: object["to"] as? [String] ?? [], data: object["data"] as? String ?? "")
    }

    deinit {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }
}
