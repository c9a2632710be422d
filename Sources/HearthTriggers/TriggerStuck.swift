import HearthStore

extension TriggerLimits {
    /// A trigger is stuck when its oldest pending event has this many counted failed
    /// attempts (answered not 2xx, or timed out)...
    public static let stuckAfterAttempts = 5
    /// ...or has failed at least once (an unreached receiver included) and was committed
    /// this long ago. A backlog draining without failures is never stuck.
    public static let stuckAfterSeconds: Int64 = 300
}

/// Whether one trigger is stuck, fed its oldest pending event now and then (the
/// deliverer's keeper): it says when that starts and when it ends, once each way, so the
/// logs name a stuck event once instead of at every attempt.
struct StuckWatch: Sendable, Equatable {
    enum Change: Sendable, Equatable {
        /// The trigger became stuck on this event.
        case started(OutboxRecord)
        /// It is not stuck any more: no pending event is stuck (the one it was stuck on
        /// was delivered, parked or dead-lettered, and the next is not failing).
        case ended(stuckOn: Int64)
    }

    /// The id of the event the trigger became stuck on; nil when it is not stuck.
    private(set) var stuckOn: Int64?

    var isStuck: Bool { stuckOn != nil }

    /// Whether `oldest`, a trigger's oldest pending event, makes it stuck at `now` (ms).
    static func isStuck(_ oldest: OutboxRecord?, now: Int64) -> Bool {
        guard let oldest, oldest.lastError != nil else { return false }
        return oldest.attempts >= TriggerLimits.stuckAfterAttempts || now - oldest.at >= TriggerLimits.stuckAfterSeconds * 1000
    }

    /// Takes the trigger's oldest pending event now (nil: none pending); returns the
    /// change, if any. Stuck on one event, then on the next: no change (still stuck).
    mutating func observe(_ oldest: OutboxRecord?, now: Int64) -> Change? {
        switch (stuckOn, Self.isStuck(oldest, now: now)) {
        case (nil, true):
            stuckOn = oldest?.id
            return oldest.map { .started($0) }
        case (let id?, false):
            stuckOn = nil
            return .ended(stuckOn: id)
        default:
            return nil
        }
    }
}
