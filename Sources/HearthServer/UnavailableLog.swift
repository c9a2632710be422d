import Dispatch
import HearthDatabase
import Logging
import Synchronization

/// Why requests are answered 503 because the store is unavailable, in the log: the first
/// such answer at once, with its cause, then at most one line per `intervalMilliseconds`
/// (`LogInterval`), counting the answers since the last line. A client is told only "try
/// again" (the cause could name the data directory or the database's host); the operator
/// reads the cause here.
final class UnavailableLog: Sendable {
    /// The shortest time between two lines, ms: an outage answering thousands of requests
    /// a second writes one line per interval, not one per request.
    static let intervalMilliseconds: Int64 = 10_000

    private let interval = Mutex(LogInterval(milliseconds: UnavailableLog.intervalMilliseconds))
    private let logger: Logger
    private let clock: @Sendable () -> Int64

    init(logger: Logger, clock: @escaping @Sendable () -> Int64 = { Int64(DispatchTime.now().uptimeNanoseconds / 1_000_000) }) {
        self.logger = logger
        self.clock = clock
    }

    /// A request (`what`: "a write", "a read", …) was refused because of `cause`;
    /// `outcomeUnknown`: a write whose COMMIT was sent before the store was lost, so it may
    /// have been written (the line says so).
    func refused(_ what: String, cause: String, outcomeUnknown: Bool = false) {
        let now = clock()
        guard let count = interval.withLock({ $0.occurred(at: now) }) else { return }
        let since = count > 1 ? " (\(count) such answers since the last line)" : ""
        let unknown = outcomeUnknown ? "; whether it was written is unknown, as the store was lost after its COMMIT was sent" : ""
        logger.warning("\(what) was answered 503, the store being unavailable: \(cause)\(unknown)\(since)")
    }
}
