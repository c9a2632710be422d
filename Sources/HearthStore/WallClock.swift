#if canImport(Glibc)
import Glibc
#endif

/// The wall clock, outside every engine: milliseconds since the Unix epoch
/// (`CLOCK_REALTIME`). Components take a clock in `init`; this is the one they get in
/// production, and tests pass their own.
public enum WallClock {
    public static let milliseconds: @Sendable () -> Int64 = {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
    }
}
