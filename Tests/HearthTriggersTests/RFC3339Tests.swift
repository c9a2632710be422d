#if canImport(Glibc)
import Glibc
#endif
import HearthTesting
import Testing
import HearthSystem
@testable import HearthTriggers

/// `CloudEventEncoding.rfc3339` (an event's `ce-time`, a schedule's due time), against
/// literals and against the C library's `gmtime_r` as an independent oracle.
@Suite struct RFC3339Tests {
    @Test func literals() {
        let cases: [(Int64, String)] = [
            (0, "1970-01-01T00:00:00.000Z"),
            (-1, "1969-12-31T23:59:59.999Z"),
            (1_764_178_681_123, "2025-11-26T17:38:01.123Z"),
            (1_796_591_645_007, "2026-12-06T21:14:05.007Z"),
            (951_782_400_000, "2000-02-29T00:00:00.000Z"),
            (4_107_542_399_999, "2100-02-28T23:59:59.999Z"),  // 2100 is no leap year
            (4_107_542_400_000, "2100-03-01T00:00:00.000Z"),
            (-2_203_891_200_000, "1900-03-01T00:00:00.000Z"),
            (-62_135_596_800_000, "0001-01-01T00:00:00.000Z"),
            (253_402_300_799_999, "9999-12-31T23:59:59.999Z"),
            (253_402_300_800_000, "10000-01-01T00:00:00.000Z"),
        ]
        for (milliseconds, text) in cases {
            #expect(CloudEventEncoding.rfc3339(milliseconds: milliseconds) == text, "\(milliseconds)")
        }
    }

    /// The first and last millisecond of every day from 1899 to 2101, and 20,000 random
    /// instants from year 1 to 9999, as `gmtime_r` reads them.
    @Test func agreesWithTheCLibrary() {
        var instants: [Int64] = []
        let day: Int64 = 86_400_000
        var start: Int64 = -2_240_524_800_000  // 1899-01-01
        while start < 4_133_980_800_000 {  // 2101-01-01
            instants += [start, start + day - 1]
            start += day
        }
        var random = SplitMix64(seed: 0x3339)
        for _ in 0..<20_000 {
            instants.append(-62_135_596_800_000 + Int64(random.next() % 315_537_897_600_000))
        }
        var mismatches: [String] = []
        for milliseconds in instants {
            let expected = Self.gmtime(milliseconds), actual = CloudEventEncoding.rfc3339(milliseconds: milliseconds)
            if actual != expected { mismatches.append("\(milliseconds): \(actual), not \(expected)") }
        }
        #expect(instants.count > 160_000)
        #expect(mismatches.isEmpty, "\(mismatches.count) differ, the first: \(mismatches.prefix(3))")
    }

    /// The oracle: seconds through `gmtime_r`, the milliseconds appended.
    static func gmtime(_ milliseconds: Int64) -> String {
        let (seconds, millis) = CivilTime.floorDivision(milliseconds, 1000)
        var time = time_t(seconds)
        var parts = tm()
        _ = gmtime_r(&time, &parts)
        func padded(_ value: Int32, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(padded(parts.tm_year + 1900, 4))-\(padded(parts.tm_mon + 1, 2))-\(padded(parts.tm_mday, 2))T"
            + "\(padded(parts.tm_hour, 2)):\(padded(parts.tm_min, 2)):\(padded(parts.tm_sec, 2)).\(padded(Int32(millis), 3))Z"
    }
}
