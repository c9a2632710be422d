import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Runs a short-lived command with `posix_spawn` and `waitpid`, without Foundation's
/// `Process`: `Process` watches children through a libdispatch source, and with many
/// short children at once (one curl per request, tests in parallel) libdispatch's event
/// loop was seen to crash (SIGSEGV in `_dispatch_event_loop_drain`) once in six full runs.
/// Synchronous: writes `input`, reads stdout to its end, reaps the child.
enum Spawn {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    static func run(_ executable: String, _ arguments: [String], input: String?, captureStderr: Bool = false) throws -> (status: Int32, output: String) {
        var stdinPipe: [Int32] = [-1, -1], stdoutPipe: [Int32] = [-1, -1]
        guard pipe(&stdinPipe) == 0 else { throw Failure(description: "pipe: errno \(errno)") }
        guard pipe(&stdoutPipe) == 0 else {
            close(stdinPipe[0]); close(stdinPipe[1])
            throw Failure(description: "pipe: errno \(errno)")
        }
        // Close-on-exec, so other tests' children do not inherit these ends (posix_spawn's
        // dup2 clears the flag on the child's 0, 1 and 2).
        for fd in stdinPipe + stdoutPipe { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, stdinPipe[0], 0)
        posix_spawn_file_actions_adddup2(&actions, stdoutPipe[1], 1)
        if captureStderr {
            posix_spawn_file_actions_adddup2(&actions, stdoutPipe[1], 2)
        } else {
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, executable, &actions, nil, argv, environ)
        close(stdinPipe[0])
        close(stdoutPipe[1])
        guard spawned == 0 else {
            close(stdinPipe[1]); close(stdoutPipe[0])
            throw Failure(description: "posix_spawn \(executable): \(spawned)")
        }
        // Feed stdin from another thread so a child that writes before it reads cannot
        // deadlock us; then close it (EOF).
        let inputFD = stdinPipe[1]
        let writer = Thread {
            if let input {
                let bytes = Array(input.utf8)
                var offset = 0
                while offset < bytes.count {
                    let n = bytes.withUnsafeBytes { write(inputFD, $0.baseAddress! + offset, bytes.count - offset) }
                    if n < 0 && errno == EINTR { continue }
                    if n <= 0 { break }
                    offset += n
                }
            }
            close(inputFD)
        }
        writer.start()
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(stdoutPipe[0], $0.baseAddress, $0.count) }
            if n > 0 { output.append(contentsOf: buffer[0..<n]); continue }
            if n < 0 && errno == EINTR { continue }
            break
        }
        close(stdoutPipe[0])
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        // WIFEXITED / WEXITSTATUS, or the signal as a negative number.
        let exited = (status & 0x7f) == 0
        return (exited ? (status >> 8) & 0xff : -(status & 0x7f), String(decoding: output, as: UTF8.self))
    }
}
