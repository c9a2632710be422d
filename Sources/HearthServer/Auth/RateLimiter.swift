import Synchronization

/// Fixed-window attempt counters per key (a client address, an account), for sign-in and
/// sign-up (DESIGN.md §6). A key over its limit is refused until its window ends.
public final class RateLimiter: Sendable {
    /// Keys tracked at most; past it, expired windows are dropped, then the oldest.
    public static let maxTrackedKeys = 100_000

    public let limit: Int
    public let windowSeconds: Int64
    private let clock: @Sendable () -> Int64
    private let windows = Mutex<[String: (start: Int64, count: Int)]>([:])

    /// - Parameter clock: seconds; injected so tests need no sleeps.
    public init(limit: Int, windowSeconds: Int64 = 60, clock: @escaping @Sendable () -> Int64) {
        self.limit = limit
        self.windowSeconds = windowSeconds
        self.clock = clock
    }

    /// Counts one attempt for `key`. Nil when allowed, else the seconds until it may retry.
    public func attempt(_ key: String) -> Int? {
        let now = clock()
        return windows.withLock { windows in
            if windows.count >= Self.maxTrackedKeys {
                windows = windows.filter { now - $0.value.start < windowSeconds }
                if windows.count >= Self.maxTrackedKeys { windows.removeAll(keepingCapacity: true) }
            }
            var entry = windows[key] ?? (now, 0)
            if now - entry.start >= windowSeconds { entry = (now, 0) }
            entry.count += 1
            windows[key] = entry
            return entry.count > limit ? Int(max(1, entry.start + windowSeconds - now)) : nil
        }
    }
}
