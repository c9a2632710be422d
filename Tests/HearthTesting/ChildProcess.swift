import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A child process for tests, started with `posix_spawn`: the part of Foundation's
/// `Process` the tests use, under the same names, so a call site changes only its type.
///
/// Not Foundation's `Process`: on Linux with Swift 6.3.1 `Process.run()` can crash the
/// whole test process (a memcpy past the end of a readdir buffer in
/// `findMaximumOpenFromProcSelfFD()`, swift-corelibs-foundation PR #5472), and it can
/// return before the child has exec'd. Here `run()` returns once the child has exec'd, or
/// throws (glibc's posix_spawn reports a failed exec: a missing executable is an error
/// naming its path) — though its `/proc/<pid>/cmdline` can still be empty for a moment
/// (the kernel releases the parent before it records the new program's arguments; see
/// DataDirectoryLockTests). The child gets descriptors 0–2 only (closefrom 3 in the child),
/// default signal handling and an empty signal mask; its exit is seen by one waiter
/// thread per child, blocked in waitid, never by a libdispatch source.
public final class ChildProcess: Sendable {
    /// Why the child ended: it exited, or a signal it did not catch ended it.
    public enum TerminationReason: Sendable, Equatable {
        case exit
        case uncaughtSignal
    }

    private struct State {
        var executableURL: URL?
        var arguments: [String] = []
        var environment: [String: String]?
        var currentDirectoryURL: URL?
        var standardInput: (any ChildProcessStream)?
        var standardOutput: (any ChildProcessStream)?
        var standardError: (any ChildProcessStream)?
        var terminationHandler: (@Sendable (ChildProcess) -> Void)?
        var processIdentifier: pid_t = 0
        var started = false
        /// Set by the waiter thread when it reaps the child (under the lock, so a pid
        /// signalled under the lock is never a reaped, reusable one).
        var ended: (status: Int32, reason: TerminationReason)?
    }

    private let state = Mutex(State())
    /// Entered in `run()`, left once the child is reaped.
    private let exited = DispatchGroup()

    public init() {}

    public var executableURL: URL? {
        get { state.withLock { $0.executableURL } }
        set { state.withLock { $0.executableURL = newValue } }
    }
    public var arguments: [String]? {
        get { state.withLock { $0.arguments } }
        set { state.withLock { $0.arguments = newValue ?? [] } }
    }
    /// The child's whole environment; nil: this process's.
    public var environment: [String: String]? {
        get { state.withLock { $0.environment } }
        set { state.withLock { $0.environment = newValue } }
    }
    public var currentDirectoryURL: URL? {
        get { state.withLock { $0.currentDirectoryURL } }
        set { state.withLock { $0.currentDirectoryURL = newValue } }
    }
    /// A `Pipe` (the child gets its reading end) or a `FileHandle`; nil: this process's.
    public var standardInput: (any ChildProcessStream)? {
        get { state.withLock { $0.standardInput } }
        set { state.withLock { $0.standardInput = newValue } }
    }
    /// A `Pipe` (the child gets its writing end) or a `FileHandle`; nil: this process's.
    public var standardOutput: (any ChildProcessStream)? {
        get { state.withLock { $0.standardOutput } }
        set { state.withLock { $0.standardOutput = newValue } }
    }
    public var standardError: (any ChildProcessStream)? {
        get { state.withLock { $0.standardError } }
        set { state.withLock { $0.standardError = newValue } }
    }
    /// Called once on the waiter thread after the child has been reaped.
    public var terminationHandler: (@Sendable (ChildProcess) -> Void)? {
        get { state.withLock { $0.terminationHandler } }
        set { state.withLock { $0.terminationHandler = newValue } }
    }

    /// The child's pid; 0 before `run()`.
    public var processIdentifier: Int32 { state.withLock { $0.processIdentifier } }

    public var isRunning: Bool { state.withLock { $0.started && $0.ended == nil } }

    /// The exit status, or the number of the signal that ended the child. Only after exit.
    public var terminationStatus: Int32 {
        state.withLock { state in
            guard let ended = state.ended else { preconditionFailure("ChildProcess.terminationStatus before the child exited") }
            return ended.status
        }
    }

    public var terminationReason: TerminationReason {
        state.withLock { state in
            guard let ended = state.ended else { preconditionFailure("ChildProcess.terminationReason before the child exited") }
            return ended.reason
        }
    }

    /// Starts the child; returns once it has exec'd. The parent's copies of the child's
    /// pipe ends are closed, so the parent's ends see end of file when the child is gone.
    public func run() throws {
        try state.withLock { state throws(ChildProcessError) in
            guard !state.started else { throw ChildProcessError("ChildProcess.run() called twice") }
            guard let executable = state.executableURL?.path else { throw ChildProcessError("ChildProcess.run() without an executableURL") }
            let ends = [state.standardInput?.childEnd(forInput: true), state.standardOutput?.childEnd(forInput: false),
                        state.standardError?.childEnd(forInput: false)]
            let request = SpawnRequest(
                command: [executable] + state.arguments,
                environment: state.environment.map { $0.map { "\($0.key)=\($0.value)" } },
                directory: state.currentDirectoryURL?.path,
                streams: ends.map { $0?.descriptor })
            state.processIdentifier = try Self.spawn(request)
            state.started = true
            exited.enter()
            for case let parentCopy? in ends.map({ $0?.parentCopy }) { try? parentCopy.close() }
        }
        let thread = Thread { [self] in reap() }
        thread.name = "hearth-test-child-waiter"
        thread.start()
    }

    /// Blocks until the child has exited and been reaped.
    public func waitUntilExit() {
        precondition(state.withLock { $0.started }, "ChildProcess.waitUntilExit() before run()")
        exited.wait()
    }

    /// Sends SIGTERM, if the child still runs.
    public func terminate() { signal(SIGTERM) }

    /// Sends SIGINT, if the child still runs.
    public func interrupt() { signal(SIGINT) }

    /// Sends `number` to the child, if it has not been reaped (so the pid is still its).
    public func signal(_ number: Int32) {
        state.withLock { state in
            if state.started && state.ended == nil { _ = kill(state.processIdentifier, number) }
        }
    }

    /// The waiter thread: waits for the exit without reaping (the pid stays the child's
    /// while a signal may be sent under the lock), then reaps under the lock.
    private func reap() {
        let pid = processIdentifier
        var info = siginfo_t()
        while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) != 0 && errno == EINTR {}
        let handler = state.withLock { state -> (@Sendable (ChildProcess) -> Void)? in
            var status: Int32 = 0
            var reaped = waitpid(pid, &status, 0)
            while reaped < 0 && errno == EINTR { reaped = waitpid(pid, &status, 0) }
            if reaped < 0 {
                state.ended = (-1, .exit)  // not ours to reap (someone else waited): unknown
            } else if status & 0x7F == 0 {  // WIFEXITED
                state.ended = ((status >> 8) & 0xFF, .exit)
            } else {
                state.ended = (status & 0x7F, .uncaughtSignal)
            }
            return state.terminationHandler
        }
        exited.leave()
        handler?(self)
    }
}

/// A child's standard stream: a Foundation `Pipe` or `FileHandle`.
public protocol ChildProcessStream: Sendable {
    /// The descriptor the child gets, -1 for /dev/null, and the parent's copy to close
    /// once the child has it (a pipe's child end), if any.
    func childEnd(forInput: Bool) -> (descriptor: Int32, parentCopy: FileHandle?)
}

extension Pipe: ChildProcessStream {
    public func childEnd(forInput: Bool) -> (descriptor: Int32, parentCopy: FileHandle?) {
        let end = forInput ? fileHandleForReading : fileHandleForWriting
        return (end.fileDescriptor, end)
    }
}

extension FileHandle: ChildProcessStream {
    public func childEnd(forInput: Bool) -> (descriptor: Int32, parentCopy: FileHandle?) {
        (self === FileHandle.nullDevice ? -1 : fileDescriptor, nil)
    }
}

/// Why a child could not be started.
public struct ChildProcessError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

extension ChildProcess {
    /// What to spawn: `command[0]` is the executable's path.
    struct SpawnRequest {
        var command: [String]
        /// "NAME=value" entries; nil: this process's environment.
        var environment: [String]?
        var directory: String?
        /// Descriptors 0, 1, 2 of the child: a descriptor to copy, -1 for /dev/null, nil
        /// for this process's own.
        var streams: [Int32?]
        /// Out of this process's group, so a signal to the test runner's group (Ctrl-C, a
        /// runner cleaning up) does not reach the child.
        var ownProcessGroup = false
    }

    private typealias AddClosefrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, Int32) -> Int32
    private typealias AddChdir = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, UnsafePointer<CChar>?) -> Int32

    private static func glibcFunction<F>(_ name: String, as type: F.Type) -> F? {
        guard let program = dlopen(nil, RTLD_NOW), let symbol = dlsym(program, name) else { return nil }
        return unsafeBitCast(symbol, to: type)
    }

    /// posix_spawn `request`: the child's pid once it has exec'd, or an error naming the
    /// executable. Nothing is inherited but descriptors 0–2; signals are at their defaults
    /// and unblocked.
    static func spawn(_ request: SpawnRequest) throws(ChildProcessError) -> pid_t {
        let executable = request.command[0]
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (target, source) in request.streams.enumerated() {
            guard let source else { continue }
            if source < 0 {
                posix_spawn_file_actions_addopen(&actions, Int32(target), "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0)
            } else {
                posix_spawn_file_actions_adddup2(&actions, source, Int32(target))
            }
        }
        // glibc has both (2.34+, 2.29+) but declares them only for _GNU_SOURCE, which
        // Swift's Glibc module is not built with: they are looked up at run time.
        if let closefrom = glibcFunction("posix_spawn_file_actions_addclosefrom_np", as: AddClosefrom.self) {
            _ = closefrom(&actions, 3)
        } else {  // older glibc: close what is open now
            let open = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
            for fd in open.compactMap(Int32.init) where fd > 2 { posix_spawn_file_actions_addclose(&actions, fd) }
        }
        if let directory = request.directory {
            guard let chdir = glibcFunction("posix_spawn_file_actions_addchdir_np", as: AddChdir.self) else {
                throw ChildProcessError("cannot run \(executable) in \(directory): this libc has no posix_spawn_file_actions_addchdir_np")
            }
            _ = chdir(&actions, directory)
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var mask = sigset_t()
        sigemptyset(&mask)
        posix_spawnattr_setsigmask(&attributes, &mask)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGPIPE, SIGINT, SIGTERM, SIGQUIT, SIGHUP, SIGCHLD, SIGUSR1, SIGUSR2, SIGALRM] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF
        if request.ownProcessGroup {
            flags |= POSIX_SPAWN_SETPGROUP
            posix_spawnattr_setpgroup(&attributes, 0)
        }
        posix_spawnattr_setflags(&attributes, Int16(flags))

        let argv = request.command.map { strdup($0) } + [nil]
        let envp = request.environment.map { $0.map { strdup($0) } + [nil] }
        defer { for pointer in argv + (envp ?? []) { free(pointer) } }
        var pid = pid_t()
        let spawned = envp.map { posix_spawn(&pid, executable, &actions, &attributes, argv, $0) }
            ?? posix_spawn(&pid, executable, &actions, &attributes, argv, environ)
        guard spawned == 0 else {
            throw ChildProcessError("could not run \(executable): \(String(cString: strerror(spawned))) (errno \(spawned))")
        }
        return pid
    }
}
