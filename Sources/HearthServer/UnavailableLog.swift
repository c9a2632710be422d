import Dispatch
import Logging
import Synchronization

/// How often the log says why requests are answered 503 because the store is
/// unavailable: the first such answer at once, with its cause, then at most one line per
/// `intervalMilliseconds`, counting the answers since the last line. A client is told only
/// "try again" (its cause could name the data directory or the database's host); the
/// operator reads the cause here. A pure state over the times it is given
/// (`UnavailableLogTests`).
struct UnavailableThrottle: Sendable {
    /// The shortest time between two lines, ms: an outage answering thousands of requests
    /// a second writes one line per interval, not one per request.
    static let intervalMilliseconds: Int64 = 10_000

    private var lastLine: Int64?
    private var unlogged = 0

    /// One more answer at `now`: how many answers the line written now stands for (this one
    /// and those since the last line), or nil when no line is due.
    mutating func answered(at now: Int64) -> Int? {
        unlogged += 1
        if let lastLine, now - lastLine < Self.intervalMilliseconds { return nil }
        defer { (unlogged, lastLine) = (0, now) }
        return unlogged
    }
}

/// `UnavailableThrottle` over the monotonic clock, writing its lines to the log.
final class UnavailableLog: Sendable {
    private let throttle = Mutex(UnavailableThrottle())
    private let logger: Logger
    private let clock: @Sendable () -> Int64

    init(logger: Logger, clock: @escaping @Sendable () -> Int64 = { Int64(DispatchTime.now().uptimeNanoseconds / 1_000_000) }) {
        self.logger = logger
        self.clock = clock
    }

    /// A request (`what`: "a write", "a read", …) was refused because of `cause`.
    func refused(_ what: String, cause: String) {
        let now = clock()
        guard let count = throttle.withLock({ $0.answered(at: now) }) else { return }
        let since = count > 1 ? " (\(count) such answers since the last line)" : ""
        logger.warning("\(what) was answered 503, the store being unavailable: \(cause)\(since)")
    }
}
