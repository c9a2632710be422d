/// When a repeated warning is written: the first occurrence at once, then at most one line
/// per `milliseconds`, each counting the occurrences it stands for (this one and those
/// since the last line), so a condition met thousands of times a second writes one line
/// per interval. A pure state over the times it is given (`LogIntervalTests`); its owner
/// keeps it under its own lock. Used for requests answered 503 for an unavailable store
/// and for triggers past their rate.
package struct LogInterval: Sendable {
    /// The shortest time between two lines, ms.
    package let milliseconds: Int64
    private var lastLine: Int64?
    private var unlogged = 0

    package init(milliseconds: Int64) {
        self.milliseconds = milliseconds
    }

    /// One more occurrence at `now`: how many occurrences the line due now stands for, or
    /// nil when no line is due.
    package mutating func occurred(at now: Int64) -> Int? {
        unlogged += 1
        if let lastLine, now - lastLine < milliseconds { return nil }
        defer { (unlogged, lastLine) = (0, now) }
        return unlogged
    }
}
