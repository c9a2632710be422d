#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Generates Firebase push IDs (docs/protocol/rest.md §1.6, js-sdk
/// `core/util/NextPushId.ts`): 20 characters from a 64-character alphabet in ASCII order,
/// so IDs sort by creation time.
///
/// * Characters 0–7: the clock in milliseconds since the epoch, base 64, most significant
///   digit first (48 bits: good until the year 10889).
/// * Characters 8–19: 72 random bits. When the timestamp equals the previous ID's, the
///   previous random part plus one (carry from the right, `z` wraps to `-`) instead, so
///   IDs from one generator strictly increase.
///
/// Two deliberate additions to the js-sdk algorithm, both keeping that guarantee:
/// * the clock going backwards (NTP step, VM migration) does not make IDs go backwards:
///   the timestamp used is `max(previous, now)`, i.e. while the clock is behind, IDs keep
///   the previous timestamp and count up in their random part;
/// * if the 72-bit counter would wrap (only an injected random source can get there), the
///   timestamp moves one millisecond ahead and a fresh random part is drawn.
///
/// This is a value type with injected clock and randomness for tests; the server uses the
/// thread-safe `SharedPushIDGenerator`.
public struct PushIDGenerator: Sendable {
    /// The alphabet, in ASCII order: `-`, digits, upper case, `_`, lower case.
    public static let alphabet: [UInt8] = Array("-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz".utf8)
    /// Length of an ID.
    public static let length = 20
    static let timestampDigits = 8
    static let randomDigits = 12

    private let clock: @Sendable () -> Int64
    private var random: any RandomNumberGenerator & Sendable
    /// The timestamp of the previous ID, or nil before the first.
    private var lastTimestamp: Int64?
    /// The previous ID's random part, as 12 digits in 0..<64.
    private var lastRandom: [UInt8] = []

    /// - Parameters:
    ///   - clock: milliseconds since the Unix epoch; defaults to the system clock.
    ///   - random: the source of the 72 random bits; defaults to the system CSPRNG.
    public init(
        clock: @escaping @Sendable () -> Int64 = PushIDGenerator.systemMilliseconds,
        random: any RandomNumberGenerator & Sendable = SystemRandomNumberGenerator()
    ) {
        self.clock = clock
        self.random = random
    }

    /// The next ID, strictly greater than every ID this generator returned before.
    public mutating func next() -> String {
        let now = min(max(clock(), 0), Self.maxTimestamp)
        if let last = lastTimestamp, now <= last {
            // Same millisecond, or the clock went back: count up from the previous ID.
            if !Self.increment(&lastRandom) {
                lastTimestamp = last + 1
                lastRandom = drawRandomDigits()
            }
        } else {
            lastTimestamp = now
            lastRandom = drawRandomDigits()
        }
        return Self.format(timestamp: lastTimestamp!, random: lastRandom)
    }

    /// 48 bits: the largest timestamp 8 base-64 digits hold.
    static let maxTimestamp: Int64 = (1 << 48) - 1

    private mutating func drawRandomDigits() -> [UInt8] {
        var bits = random.next() as UInt64  // 64 bits for the first 10 digits + 4 spare
        var more = random.next() as UInt64  // the last 2 digits
        var digits = [UInt8](repeating: 0, count: Self.randomDigits)
        for i in 0..<10 {
            digits[i] = UInt8(bits & 63)
            bits >>= 6
        }
        for i in 10..<12 {
            digits[i] = UInt8(more & 63)
            more >>= 6
        }
        return digits
    }

    /// Adds one to a base-64 number, most significant digit first. False when it wrapped
    /// around to all zeros.
    static func increment(_ digits: inout [UInt8]) -> Bool {
        var i = digits.count - 1
        while i >= 0 {
            if digits[i] < 63 {
                digits[i] += 1
                return true
            }
            digits[i] = 0
            i -= 1
        }
        return false
    }

    static func format(timestamp: Int64, random: [UInt8]) -> String {
        var bytes = [UInt8](repeating: 0, count: length)
        var t = timestamp
        for i in stride(from: timestampDigits - 1, through: 0, by: -1) {
            bytes[i] = alphabet[Int(t & 63)]
            t >>= 6
        }
        for (i, digit) in random.enumerated() {
            bytes[timestampDigits + i] = alphabet[Int(digit)]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The system's wall clock in milliseconds since the Unix epoch.
    @Sendable
    public static func systemMilliseconds() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
    }
}
