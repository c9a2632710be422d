import HearthDatabase
import Logging
import Synchronization

/// What the log says about a store that cannot be reached: one warning when
/// an outage starts and one info when it ends, however often the periodic work that meets
/// it (the onDisconnect take-over, every `Engines.orphanCheckInterval`) fails meanwhile. An
/// outage that starts within `quietMilliseconds` of the last one announced is not announced
/// again (nor its end), so a flapping database cannot fill the log. A pure state over the
/// times it is given (`StoreOutageReportTests`).
struct StoreOutageReport: Sendable {
    /// The shortest time between two outage warnings, ms.
    static let quietMilliseconds: Int64 = 60_000

    enum Line: Equatable, Sendable {
        /// The store stopped answering: `reason` is the first failure's text.
        case started(reason: String)
        /// It answers again after `downMilliseconds`.
        case ended(downMilliseconds: Int64)
    }

    /// When the current outage began, nil while the store answers.
    private(set) var downSince: Int64?
    /// Whether the current outage was announced (its end is announced only then).
    private var announced = false
    private var lastAnnounced: Int64?

    /// The periodic work failed because the store cannot be reached.
    mutating func unreachable(_ reason: String, at now: Int64) -> Line? {
        guard downSince == nil else { return nil }
        downSince = now
        if let lastAnnounced, now - lastAnnounced < Self.quietMilliseconds {
            announced = false
            return nil
        }
        (announced, lastAnnounced) = (true, now)
        return .started(reason: reason)
    }

    /// The periodic work reached the store.
    mutating func reached(at now: Int64) -> Line? {
        guard let since = downSince else { return nil }
        downSince = nil
        return announced ? .ended(downMilliseconds: now - since) : nil
    }
}

/// `StoreOutageReport` shared by the timers that meet an outage, writing its lines to the log.
final class StoreOutageLog: Sendable {
    private let report = Mutex(StoreOutageReport())
    private let logger: Logger
    private let clock: @Sendable () -> Int64

    init(logger: Logger, clock: @escaping @Sendable () -> Int64) {
        self.logger = logger
        self.clock = clock
    }

    /// Runs `body`; a failure because the store cannot be reached goes to the report, any
    /// other is logged at error as `what`.
    func run(_ what: String, _ body: () throws -> Void) {
        let now = clock()
        do {
            try body()
            if let line = report.withLock({ $0.reached(at: now) }) { write(line) }
        } catch {
            guard case .unavailable = DatabaseError.from(error) else {
                logger.error("\(what): \(error)")
                return
            }
            if let line = report.withLock({ $0.unreachable("\(error)", at: now) }) { write(line) }
        }
    }

    private func write(_ line: StoreOutageReport.Line) {
        switch line {
        case .started(let reason):
            logger.warning("the data store cannot be reached: reads and writes are answered 503 until it answers again (\(reason))")
        case .ended(let down):
            logger.info("the data store answers again after \(down) ms")
        }
    }
}
