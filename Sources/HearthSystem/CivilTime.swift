/// An instant in UTC broken into the proleptic Gregorian calendar's fields: what `gmtime_r`
/// computes, by integer arithmetic on the day count (H. Hinnant's `civil_from_days`: the
/// calendar's 400-year cycles, counted from a March 1st so that a leap day ends its year),
/// without a C call or Foundation's `Calendar`, which needs a time zone and a calendar
/// object per call (about 0.1 µs here against 1.2–1.4 µs). Mail's `Date:` header and the
/// CloudEvents' `ce-time` are written from it.
public struct CivilTime: Sendable, Equatable {
    /// Days since 1970-01-01 (negative before it).
    public let dayNumber: Int64
    public let year: Int64
    /// 1–12.
    public let month: Int64
    /// 1–31.
    public let day: Int64
    public let hour: Int64
    public let minute: Int64
    public let second: Int64
    public let millisecond: Int64

    /// The instant `milliseconds` after 1970-01-01T00:00:00Z (before it when negative).
    public init(milliseconds: Int64) {
        let (days, inDay) = Self.floorDivision(milliseconds, 86_400_000)
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthFromMarch = (5 * dayOfYear + 2) / 153
        dayNumber = days
        day = dayOfYear - (153 * monthFromMarch + 2) / 5 + 1
        month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9
        year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        hour = inDay / 3_600_000
        minute = inDay / 60_000 % 60
        second = inDay / 1000 % 60
        millisecond = inDay % 1000
    }

    /// `value / divisor` rounded down, and the remainder that goes with it (never negative).
    public static func floorDivision(_ value: Int64, _ divisor: Int64) -> (quotient: Int64, remainder: Int64) {
        let (quotient, remainder) = value.quotientAndRemainder(dividingBy: divisor)
        return remainder < 0 ? (quotient - 1, remainder + divisor) : (quotient, remainder)
    }
}
