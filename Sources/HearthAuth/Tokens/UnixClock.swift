import Glibc

/// Where token checks get "now" from, in whole seconds since the Unix epoch (JWT
/// NumericDate, RFC 7519 §2). Injected so tests pin time instead of sleeping.
public struct UnixClock: Sendable {
    /// The current time in seconds.
    public let now: @Sendable () -> Int64

    public init(_ now: @escaping @Sendable () -> Int64) {
        self.now = now
    }

    /// The system's wall clock (`CLOCK_REALTIME`).
    public static var system: UnixClock {
        UnixClock {
            var ts = timespec()
            clock_gettime(CLOCK_REALTIME, &ts)
            return Int64(ts.tv_sec)
        }
    }

    /// A clock stuck at `seconds`.
    public static func fixed(_ seconds: Int64) -> UnixClock {
        UnixClock { seconds }
    }
}
