import Dispatch
import HearthJSON
import HearthRules
import HearthStore
import Synchronization

/// What one database does during a chosen window (`hearth profile`, docs/profiling.md):
/// operations by kind and path pattern with counts, times and bytes; permission denials
/// by the rule that denied; queries that needed an `.indexOn` the rules lack; the rules
/// that took the most evaluation time; the slowest single operations.
///
/// Off (no window recording) every hook costs one atomic load (`isRecording`). On, each
/// record takes one lock; every table is bounded (`Limits`), and what does not fit is
/// counted in an `(other)` row. Each node profiles only itself: on a shared engine the
/// other nodes' operations are not seen.
public final class Profiler: RuleTiming {
    /// The kinds of operations recorded (docs/profiling.md says what counts as each).
    public enum Kind: String, Sendable, CaseIterable {
        case read, write, update, listen
        /// One event sent to one listener.
        case listenBroadcast = "listen-broadcast"
        /// One token verified (REST `auth=`/`Authorization`, the wire protocol's `auth`).
        case auth
    }

    /// The bounds of a window's tables.
    public enum Limits {
        /// Rows of (kind, path pattern); more go to an `(other)` row of their kind.
        public static let maxPatterns = 256
        /// Single operations kept as the slowest.
        public static let maxSlowest = 10
        /// Rules timed; more go to an `(other)` row.
        public static let maxRules = 512
        /// Rows of (operation, rule, path pattern) denied; more go to an `(other)` row.
        public static let maxDenials = 512
        /// Rows of (path pattern, index) queried without an index; more go to an `(other)` row.
        public static let maxUnindexed = 256
        /// Times kept per row for its percentiles (a uniform sample of the row's operations).
        public static let samplesPerRow = 1024
        /// The longest window, in seconds.
        public static let maxDurationSeconds = 3600
    }

    /// The path pattern (or rule) of a row that holds what did not fit in its table.
    public static let otherRow = "(other)"

    /// Why a window could not start.
    public enum StartError: Error, Sendable, Equatable {
        /// A window is recording; it ends in `secondsLeft`.
        case alreadyRecording(secondsLeft: Int)
        /// Not between 1 and `Limits.maxDurationSeconds`.
        case badDuration
    }

    private let recording = Atomic<Bool>(false)
    private let window = Mutex<ProfileWindow?>(nil)
    private let clock: @Sendable () -> UInt64
    private let wallClock: @Sendable () -> Int64

    /// - Parameters:
    ///   - clock: monotonic nanoseconds (the window's end).
    ///   - wallClock: milliseconds since the epoch (the report's start and end).
    public init(clock: @escaping @Sendable () -> UInt64 = { DispatchTime.now().uptimeNanoseconds },
                wallClock: @escaping @Sendable () -> Int64 = WallClock.milliseconds) {
        self.clock = clock
        self.wallClock = wallClock
    }

    /// Whether a window is recording: the one check every hook makes first.
    @inline(__always)
    public var isRecording: Bool { recording.load(ordering: .relaxed) }

    /// Starts a window of `seconds`, forgetting any report not fetched; `patterns` names
    /// each path's pattern (the rules' `RuleSet.pattern(of:)`).
    public func start(seconds: Int, patterns: @escaping @Sendable (DataPath) -> String) throws(StartError) {
        guard (1...Limits.maxDurationSeconds).contains(seconds) else { throw .badDuration }
        let now = clock()
        try window.withLock { (window: inout ProfileWindow?) throws(StartError) in
            if let running = window, running.isRecording(at: now) {
                throw .alreadyRecording(secondsLeft: Int((running.endsAt - now + 999_999_999) / 1_000_000_000))
            }
            window = ProfileWindow(seconds: seconds, startedAt: wallClock(), now: now, patterns: patterns)
            recording.store(true, ordering: .relaxed)
        }
    }

    /// Ends the window (if still recording) and hands over its report, forgetting it; nil
    /// when no window was started since the last one was fetched.
    public func stop() -> ProfileReport? {
        let now = clock()
        return window.withLock { window in
            guard var ended = window else { return nil }
            window = nil
            recording.store(false, ordering: .relaxed)
            ended.end(at: now, wallClock: wallClock())
            return ended.report()
        }
    }

    /// Seconds left in the recording window; nil when none records.
    public var secondsLeft: Int? {
        let now = clock()
        return window.withLock { window in
            guard let window, window.isRecording(at: now) else { return nil }
            return Int((window.endsAt - now + 999_999_999) / 1_000_000_000)
        }
    }

    /// Runs `body` on the recording window, if any; a window past its end stops here.
    private func recordingWindow(_ body: (inout ProfileWindow) -> Void) {
        let now = clock()
        window.withLock { window in
            guard window != nil else { return }
            guard window!.isRecording(at: now) else {
                window!.end(at: now, wallClock: wallClock())
                recording.store(false, ordering: .relaxed)
                return
            }
            body(&window!)
        }
    }

    /// One operation: `count` of `kind` at `path` (broadcasts of one event to many
    /// listeners come as one call), taking `nanoseconds` in all.
    public func record(_ kind: Kind, at path: DataPath, nanoseconds: Int64, bytesIn: Int = 0, bytesOut: Int = 0, count: Int = 1) {
        guard isRecording else { return }
        recordingWindow { $0.operation(kind, at: path, nanoseconds: nanoseconds, bytesIn: bytesIn, bytesOut: bytesOut, count: count) }
    }

    /// `record` with the path's pattern computed by the caller (`Database.profilePattern`),
    /// before the operation: on the single writer's completion a write's record then
    /// only takes the lock.
    public func record(_ kind: Kind, pattern: String, at path: DataPath, nanoseconds: Int64, bytesIn: Int = 0, bytesOut: Int = 0) {
        guard isRecording else { return }
        recordingWindow { $0.operation(kind, pattern: pattern, path: path, nanoseconds: nanoseconds, bytesIn: bytesIn, bytesOut: bytesOut, count: 1) }
    }

    /// The transports whose token verifications are counted (`Kind.auth`), by the path their
    /// rows show.
    public enum AuthTransport: String, Sendable {
        case rest = "(rest)"
        case wire = "(wire)"
    }

    /// One token verification (`Kind.auth`), by the transport that asked.
    public func recordAuth(_ transport: AuthTransport, nanoseconds: Int64, bytesIn: Int = 0, bytesOut: Int = 0) {
        guard isRecording else { return }
        recordingWindow {
            $0.operation(.auth, pattern: transport.rawValue, path: nil, nanoseconds: nanoseconds,
                         bytesIn: bytesIn, bytesOut: bytesOut, count: 1)
        }
    }

    /// A permission denial of a `read` or `write` at `path`, by `rule` (its location, or a
    /// description such as `no rule granted`).
    public func denied(_ operation: String, at path: DataPath, rule: String) {
        guard isRecording else { return }
        recordingWindow { $0.denial(operation, at: path, rule: rule) }
    }

    /// A query at `path` that needs `index` (`.indexOn` entry) which the rules lack.
    public func unindexed(at path: DataPath, index: String) {
        guard isRecording else { return }
        recordingWindow { $0.unindexed(at: path, index: index) }
    }

    public func rulesEvaluated(_ timings: [RuleTime]) {
        guard isRecording else { return }
        recordingWindow { window in
            for timing in timings { window.rule(timing.location, nanoseconds: timing.nanoseconds) }
        }
    }

    /// Self while recording, for the rules' `timing:`; nil otherwise.
    public var timing: (any RuleTiming)? { isRecording ? self : nil }

    /// Nanoseconds since `start` (a `DispatchTime.now().uptimeNanoseconds`).
    public static func since(_ start: UInt64) -> Int64 {
        let now = DispatchTime.now().uptimeNanoseconds
        return now > start ? Int64(now - start) : 0
    }

    /// A start time for `since`.
    public static var now: UInt64 { DispatchTime.now().uptimeNanoseconds }
}
