import HearthStore
import Synchronization

/// Fixed-window attempt counters per key (a client address, an account), for sign-in and
/// sign-up (docs/design.md §6). A key over its limit is refused until its window ends.
public final class RateLimiter: Sendable {
    /// Keys tracked at most by default; past the cap, expired windows are dropped, and if
    /// that is not enough every window starts over (memory stays bounded under a flood of
    /// addresses; an attacker gains at most one fresh window).
    public static let defaultMaxTrackedKeys = 100_000

    public let limit: Int
    public let maxTrackedKeys: Int
    public let windowSeconds: Int64
    private let clock: @Sendable () -> Int64
    private let windows = Mutex<[String: (start: Int64, count: Int)]>([:])
    /// Counters every node shares; nil: this process's memory.
    private let shared: (any LimitCounters)?
    /// Prefixes this limiter's keys among the shared counters.
    private let name: String

    /// - Parameters:
    ///   - clock: seconds; injected so tests need no sleeps.
    ///   - shared: counters shared by several nodes, under keys prefixed with `name`.
    public init(limit: Int, windowSeconds: Int64 = 60, maxTrackedKeys: Int = defaultMaxTrackedKeys,
                clock: @escaping @Sendable () -> Int64, shared: (any LimitCounters)? = nil, name: String = "") {
        self.limit = limit
        self.maxTrackedKeys = maxTrackedKeys
        self.windowSeconds = windowSeconds
        self.clock = clock
        self.shared = shared
        self.name = name
    }

    public var trackedKeys: Int { windows.withLock { $0.count } }

    /// Counts one attempt for `key`. Nil when allowed, else the seconds until it may retry.
    public func attempt(_ key: String) -> Int? {
        let now = clock()
        if let shared {
            let id = "rate:" + name + ":" + key
            // Unreachable counters let the attempt through: the account lookup behind it
            // needs the same database and fails on its own.
            return try? shared.update([id], now: now, keepSeconds: windowSeconds) { records in
                var record = records[id] ?? LimitRecord(count: 0, start: now, last: now)
                if now - record.start >= windowSeconds { record = LimitRecord(count: 0, start: now, last: now) }
                record.count += 1
                record.last = now
                records[id] = record
                return record.count > Int64(limit) ? Int(max(1, record.start + windowSeconds - now)) : nil
            } ?? nil
        }
        return windows.withLock { windows in
            if windows[key] == nil && windows.count >= maxTrackedKeys {
                windows = windows.filter { now - $0.value.start < windowSeconds }
                if windows.count >= maxTrackedKeys { windows.removeAll(keepingCapacity: true) }
            }
            var entry = windows[key] ?? (now, 0)
            if now - entry.start >= windowSeconds { entry = (now, 0) }
            entry.count += 1
            windows[key] = entry
            return entry.count > limit ? Int(max(1, entry.start + windowSeconds - now)) : nil
        }
    }
}
