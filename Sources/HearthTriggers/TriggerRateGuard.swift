import HearthDatabase
import HearthStore
import Logging
import Synchronization

/// The loop guard: a function that writes back to its own trigger's
/// path (through `firebase-admin`) causes one event per event it handles, and one that
/// writes twice (a `push` and a counter, say) multiplies them. Hearth never refuses or
/// slows a write for it; instead each trigger records at most `eventsPerSecond` events per
/// second, with bursts up to `burst` (a token bucket). Events past it are recorded marked,
/// and the trigger's deliverer moves them straight to the dead letters with the reason
/// `rate limited`, unsent, with a log line (at most one per trigger per
/// `logIntervalMilliseconds`) and the metric `hearth_trigger_rate_limited_total`. So a
/// runaway loop is bounded to the rate, and the outbox to `TriggerLimits.maxPendingPerTrigger`.
///
/// An operator can resend them: the marks this process made are remembered (in memory)
/// until the deliverer consumes them, so a resent event (its mark consumed) is delivered.
/// After a restart, events still pending with an old mark are delivered, not killed.
public final class TriggerRateGuard: Sendable {
    /// Events one trigger may record per second, sustained (a trigger's own
    /// `maxEventsPerSecond` overrides it).
    public static let defaultEventsPerSecond = TriggerLimits.defaultEventsPerSecond
    /// Events one trigger may record at once above the sustained rate (a write at a
    /// parent that fires for many children, an import): `rateBurstSeconds` seconds' worth.
    public static let defaultBurst = TriggerLimits.defaultEventsPerSecond * TriggerLimits.rateBurstSeconds
    /// At most one log line per trigger this often while it is rate limited.
    static let logIntervalMilliseconds: Int64 = 10_000
    /// Marks remembered per trigger (events killed past the pending bound never consume
    /// theirs): past it the oldest are forgotten (those events, if still pending, are delivered).
    public static let maxOutstandingMarks = 2 * TriggerLimits.maxPendingPerTrigger
    /// The dead letters' reason.
    public static let reason = "rate limited"

    private struct Bucket {
        var tokens: Double
        var refilledAt: Int64
        var limited = 0
        var log = LogInterval(milliseconds: TriggerRateGuard.logIntervalMilliseconds)
        var outstanding: Set<Int64> = []
    }
    private struct State {
        var buckets: [String: Bucket] = [:]
        var nextMark: Int64 = 1
    }

    let eventsPerSecond: Int
    public let burst: Int
    private let outstandingLimit: Int
    private let clock: @Sendable () -> Int64
    private let logger: Logger
    private let state = Mutex(State())
    /// This process's marks' prefix: a mark from another run is never taken for one of ours.
    private let nonce = UInt64.random(in: 1...UInt64.max)

    /// `maxOutstandingMarks` is a parameter so tests can cross it.
    public init(eventsPerSecond: Int = TriggerRateGuard.defaultEventsPerSecond, burst: Int = TriggerRateGuard.defaultBurst,
                maxOutstandingMarks: Int = TriggerRateGuard.maxOutstandingMarks, clock: @escaping @Sendable () -> Int64, logger: Logger) {
        (self.eventsPerSecond, self.burst, self.clock, self.logger) = (max(1, eventsPerSecond), max(1, burst), clock, logger)
        outstandingLimit = max(1, maxOutstandingMarks)
    }

    /// `events` as they are recorded: those past their trigger's rate marked. `rates`: the
    /// triggers' own sustained rates (`maxEventsPerSecond`), with bursts of
    /// `TriggerLimits.rateBurstSeconds` seconds' worth; a trigger not in it has the guard's.
    public func admit(_ events: [OutboxEvent], rates: [String: Int] = [:]) -> [OutboxEvent] {
        guard !events.isEmpty else { return events }
        let now = clock()
        var logLines: [String] = []
        let admitted = state.withLock { state in
            events.map { event -> OutboxEvent in
                let (eventsPerSecond, burst) = rates[event.trigger].map { ($0, $0 * TriggerLimits.rateBurstSeconds) }
                    ?? (self.eventsPerSecond, self.burst)
                var bucket = state.buckets[event.trigger] ?? Bucket(tokens: Double(burst), refilledAt: now)
                defer { state.buckets[event.trigger] = bucket }
                let elapsed = max(0, now - bucket.refilledAt)
                bucket.tokens = min(Double(burst), bucket.tokens + Double(elapsed) * Double(eventsPerSecond) / 1000)
                bucket.refilledAt = now
                if bucket.tokens >= 1 {
                    bucket.tokens -= 1
                    return event
                }
                bucket.limited += 1
                if let count = bucket.log.occurred(at: now) {
                    logLines.append("trigger \(event.trigger) records events faster than \(eventsPerSecond)/s (burst \(burst)): "
                                    + "\(count) event(s) go to the dead letters (\"\(Self.reason)\"); "
                                    + "a function writing back to its own trigger's path?")
                }
                let mark = state.nextMark
                state.nextMark += 1
                if bucket.outstanding.count >= outstandingLimit, let oldest = bucket.outstanding.min() {
                    bucket.outstanding.remove(oldest)
                }
                bucket.outstanding.insert(mark)
                return OutboxEvent(trigger: event.trigger, payload: marked(event.payload, mark))
            }
        }
        for line in logLines { logger.warning("\(line)") }
        return admitted
    }

    /// True when `record` was recorded past its trigger's rate by this process and not
    /// resent since: the deliverer kills it unsent. Consumes the mark (a resend delivers it).
    func consume(_ record: OutboxRecord) -> Bool {
        guard let mark = mark(of: record.payload) else { return false }
        return state.withLock { $0.buckets[record.trigger]?.outstanding.remove(mark) != nil }
    }

    /// Per trigger: events rate limited since this process started.
    public var limited: [String: Int] {
        state.withLock { $0.buckets.compactMapValues { $0.limited > 0 ? $0.limited : nil } }
    }

    /// A marked payload starts with `{"rateLimited":"<nonce>-<mark>",` (a payload this
    /// module writes otherwise starts with one of its own keys, never this one), so the
    /// check is a prefix test; the rest is the payload as it was.
    static let markerKey = Array(#"{"rateLimited":""#.utf8)

    private var prefix: [UInt8] { Self.markerKey + Array("\(nonce)-".utf8) }

    func marked(_ payload: [UInt8], _ mark: Int64) -> [UInt8] {
        guard payload.first == UInt8(ascii: "{"), payload.count > 2 else { return payload }
        return prefix + Array("\(mark)\",".utf8) + payload.dropFirst()
    }

    func mark(of payload: [UInt8]) -> Int64? {
        let prefix = self.prefix
        guard payload.starts(with: prefix) else { return nil }
        let digits = payload.dropFirst(prefix.count).prefix { $0 != UInt8(ascii: "\"") }
        return Int64(String(decoding: digits, as: UTF8.self))
    }

    /// True for a payload marked by any run's guard.
    static func isMarked(_ payload: [UInt8]) -> Bool { payload.starts(with: markerKey) }
}
