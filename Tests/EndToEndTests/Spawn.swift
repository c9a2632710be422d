import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Runs a short-lived command as a `ChildProcess` (posix_spawn; see there why not
/// Foundation's `Process`, which also watches children through a libdispatch source that,
/// with many short children at once, was seen to crash in `_dispatch_event_loop_drain`).
/// Synchronous: writes `input`, reads stdout to its end, reaps the child.
enum Spawn {
    /// `currentDirectory`: the child's working directory (nil: this process's);
    /// `environment`: its whole environment (nil: this process's).
    static func run(_ executable: String, _ arguments: [String], input: String?, captureStderr: Bool = false,
                    currentDirectory: String? = nil, environment: [String: String]? = nil) throws -> (status: Int32, output: String) {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let currentDirectory { process.currentDirectoryURL = URL(fileURLWithPath: currentDirectory) }
        if let environment { process.environment = environment }
        let (stdin, stdout) = (Pipe(), Pipe())
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = captureStderr ? stdout : FileHandle.nullDevice
        try process.run()
        // Feed stdin from another thread so a child that writes before it reads cannot
        // deadlock us; then close it (EOF). Plain writes: a child that exits without
        // reading is EPIPE here, not a trap.
        let writer = Thread {
            let fd = stdin.fileHandleForWriting.fileDescriptor
            let bytes = Array((input ?? "").utf8)
            var offset = 0
            while offset < bytes.count {
                let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + offset, bytes.count - offset) }
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { break }
                offset += n
            }
            try? stdin.fileHandleForWriting.close()
        }
        writer.start()
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        let fd = stdout.fileHandleForReading.fileDescriptor
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n > 0 { output.append(contentsOf: buffer[0..<n]); continue }
            if n < 0 && errno == EINTR { continue }
            break
        }
        process.waitUntilExit()
        // The exit status, or the signal as a negative number.
        let status = process.terminationReason == .exit ? process.terminationStatus : -process.terminationStatus
        return (status, String(decoding: output, as: UTF8.self))
    }
}
