import Foundation

/// Every bound of schedules, named (each crossed by a test).
public enum ScheduleLimits {
    /// A schedule expression's length, in bytes.
    static let maxExpressionLength = 256
    /// A `timeZone` name's length, in bytes (IANA names are far shorter).
    static let maxTimeZoneLength = 64
    /// `every N minutes`: N in 1...this (a day).
    static let maxEveryMinutes = 24 * 60
    /// `every N hours`: N in 1...this (a day).
    static let maxEveryHours = 24
    /// How many days the next (or the latest) due time of a cron expression is looked for:
    /// an expression that can fire at all fires within it (a 29 February falls at least once
    /// in eight years: 2096, then 2104).
    static let searchDays: Int64 = 9 * 366
    /// The longest the scheduler sleeps between two looks at its schedules (a clock set
    /// forward, or a schedule file reloaded, is seen within it).
    static let maxSleepMilliseconds: Int64 = 30_000
}

/// Why a schedule expression or time zone was refused.
public struct ScheduleError: Error, Sendable, Equatable, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

/// A schedule in Cloud Scheduler's syntax (docs/triggers.md, "Schedules"), in a time zone:
///
/// - unix cron, five fields: minute (0-59), hour (0-23), day of month (1-31), month (1-12 or
///   JAN-DEC), day of week (0-7, 0 and 7 Sunday, or SUN-SAT); each field `*`, a value, a
///   range `a-b`, a step `*/s`, `a-b/s` or `a/s` (from `a` to the field's end), or a list of
///   them joined by commas. When both the day of month and the day of week are restricted
///   (neither starts with `*`), a day matching either fires (as cron does).
/// - App Engine's `every N minutes` / `every N hours` (`mins`, and the singular, also
///   accepted): due at the multiples of N minutes (hours) since 1970-01-01 00:00 UTC, so
///   every node computes the same times; the time zone does not move them.
///
/// Cron times are wall-clock times in the time zone: a time that a daylight-saving change
/// skips does not fire that day; a time it repeats fires once, at its first occurrence.
public struct TriggerSchedule: Sendable, Hashable {
    /// The expression as written.
    public let expression: String
    /// The IANA time zone name (default `UTC`).
    public let timeZoneName: String
    let rule: Rule
    private let timeZone: TimeZone

    enum Rule: Sendable, Hashable {
        case cron(CronFields)
        case every(milliseconds: Int64)
    }

    public static func == (lhs: TriggerSchedule, rhs: TriggerSchedule) -> Bool {
        lhs.expression == rhs.expression && lhs.timeZoneName == rhs.timeZoneName
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(expression)
        hasher.combine(timeZoneName)
    }

    /// What a due-time mark remembers of the schedule: a changed expression or time zone
    /// starts afresh (from its next due time), it does not fire a "missed" time of the new one.
    public var key: String { "\(timeZoneName) \(expression)" }

    public init(_ expression: String, timeZone: String = "UTC") throws(ScheduleError) {
        guard expression.utf8.count <= ScheduleLimits.maxExpressionLength else {
            throw ScheduleError("longer than \(ScheduleLimits.maxExpressionLength) bytes")
        }
        guard !timeZone.isEmpty, timeZone.utf8.count <= ScheduleLimits.maxTimeZoneLength,
              timeZone.utf8.allSatisfy({ $0 == 0x2B || $0 == 0x2D || $0 == 0x2F || $0 == 0x5F || ($0 >= 0x30 && $0 <= 0x39) || ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x7A) }),
              let zone = TimeZone(identifier: timeZone) else {
            throw ScheduleError("unknown time zone \"\(timeZone)\" (an IANA name such as Europe/Paris or America/New_York)")
        }
        self.expression = expression
        self.timeZoneName = timeZone
        self.timeZone = zone
        let words = expression.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        if words.first?.lowercased() == "every" {
            rule = try Self.every(words)
        } else if words.count == 5 {
            rule = .cron(try CronFields(words))
        } else if words.first?.hasPrefix("@") == true {
            throw ScheduleError("\"\(words[0])\" is not supported: write the five cron fields (minute hour day-of-month month day-of-week)")
        } else {
            throw ScheduleError("must be five cron fields (minute hour day-of-month month day-of-week) or \"every N minutes\" / \"every N hours\"; found \(words.count) field(s)")
        }
    }

    private static func every(_ words: [String]) throws(ScheduleError) -> Rule {
        let usage = "the App Engine form must read \"every N minutes\" or \"every N hours\""
        guard words.count == 3, let count = Int(words[1]), words[1].utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
            throw ScheduleError(usage + " (time windows, \"synchronized\" and day names are not supported; write a cron expression)")
        }
        switch words[2].lowercased() {
        case "minute", "minutes", "min", "mins":
            guard (1...ScheduleLimits.maxEveryMinutes).contains(count) else {
                throw ScheduleError("every N minutes: N must be 1 to \(ScheduleLimits.maxEveryMinutes)")
            }
            return .every(milliseconds: Int64(count) * 60_000)
        case "hour", "hours":
            guard (1...ScheduleLimits.maxEveryHours).contains(count) else {
                throw ScheduleError("every N hours: N must be 1 to \(ScheduleLimits.maxEveryHours)")
            }
            return .every(milliseconds: Int64(count) * 3_600_000)
        default:
            throw ScheduleError(usage)
        }
    }

    /// The first due time strictly after `milliseconds` (ms since the epoch), nil when there
    /// is none within `ScheduleLimits.searchDays`.
    public func next(after milliseconds: Int64) -> Int64? {
        switch rule {
        case .every(let interval):
            return (floorDivide(milliseconds, interval) + 1) * interval
        case .cron(let fields):
            return search(fields, from: milliseconds, forward: true)
        }
    }

    /// The latest due time at or before `milliseconds`, nil when there is none within
    /// `ScheduleLimits.searchDays`.
    public func latest(atOrBefore milliseconds: Int64) -> Int64? {
        switch rule {
        case .every(let interval):
            return floorDivide(milliseconds, interval) * interval
        case .cron(let fields):
            return search(fields, from: milliseconds, forward: false)
        }
    }

    /// Walks local days from the one holding `milliseconds`, and each matching day's times,
    /// forward (the first due time after it) or backward (the latest at or before it).
    private func search(_ fields: CronFields, from milliseconds: Int64, forward: Bool) -> Int64? {
        let seconds = floorDivide(milliseconds, 1000)
        let local = seconds + offset(at: seconds)
        let today = floorDivide(local, 86_400)
        let hours = forward ? fields.hourList : fields.hourList.reversed()
        let minutes = forward ? fields.minuteList : fields.minuteList.reversed()
        // Wall-clock times further than this from `local` are on the wrong side of it
        // whatever the offsets (a day's offsets differ by less).
        let slack: Int64 = 3 * 3600
        var date = CivilDate(day: today)
        for step in 0...ScheduleLimits.searchDays {
            let day = forward ? today + step : today - step
            if step > 0 { date.step(forward: forward) }
            guard fields.matches(month: date.month, dayOfMonth: date.day, weekday: Int(((day % 7) + 11) % 7)) else { continue }
            for hour in hours {
                for minute in minutes {
                    let wall = day * 86_400 + Int64(hour) * 3600 + Int64(minute) * 60
                    if forward ? wall < local - slack : wall > local + slack { continue }
                    guard let instant = resolve(wall) else { continue }  // skipped by a clock change
                    let due = instant * 1000
                    if forward ? due > milliseconds : due <= milliseconds { return due }
                }
            }
        }
        return nil
    }

    /// The instant (s) of the wall-clock time `wall` (local seconds since the epoch): nil
    /// when a clock change skips it, its first occurrence when one repeats it.
    private func resolve(_ wall: Int64) -> Int64? {
        var earliest: Int64? = nil
        for probe in [wall - 86_400, wall, wall + 86_400] {
            let candidate = wall - offset(at: probe)
            if offset(at: candidate) == wall - candidate, candidate < earliest ?? .max { earliest = candidate }
        }
        return earliest
    }

    private func offset(at seconds: Int64) -> Int64 {
        Int64(timeZone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(seconds))))
    }
}

/// `a / b` rounded toward negative infinity.
func floorDivide(_ a: Int64, _ b: Int64) -> Int64 {
    let quotient = a / b
    return (a % b != 0 && (a < 0) != (b < 0)) ? quotient - 1 : quotient
}

/// The five fields of a cron expression, as sets of values.
struct CronFields: Sendable, Hashable {
    var minutes: UInt64 = 0
    var hours: UInt64 = 0
    var daysOfMonth: UInt64 = 0
    var months: UInt64 = 0
    var daysOfWeek: UInt64 = 0
    /// Whether the day-of-month / day-of-week field starts with `*` (cron's rule: when
    /// both are restricted, either matching fires).
    var anyDayOfMonth = false
    var anyDayOfWeek = false

    static let monthNames = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
    static let dayNames = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"]
    /// The most days each month can have (February: 29).
    static let monthDays = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]

    init(_ words: [String]) throws(ScheduleError) {
        minutes = try Self.field(words[0], name: "minute", range: 0...59, names: [], nameBase: 0)
        hours = try Self.field(words[1], name: "hour", range: 0...23, names: [], nameBase: 0)
        daysOfMonth = try Self.field(words[2], name: "day-of-month", range: 1...31, names: [], nameBase: 0)
        months = try Self.field(words[3], name: "month", range: 1...12, names: Self.monthNames, nameBase: 1)
        daysOfWeek = try Self.field(words[4], name: "day-of-week", range: 0...7, names: Self.dayNames, nameBase: 0)
        if daysOfWeek & (1 << 7) != 0 { daysOfWeek = (daysOfWeek | 1) & ~(1 << 7) }  // 7 is Sunday
        anyDayOfMonth = words[2].hasPrefix("*")
        anyDayOfWeek = words[4].hasPrefix("*")
        // Days of month no chosen month has (30 February): the expression would never fire.
        if anyDayOfWeek || !anyDayOfMonth {
            let possible = (1...12).contains { month in
                months & (1 << month) != 0 && (1...Self.monthDays[month - 1]).contains { daysOfMonth & (1 << $0) != 0 }
            }
            guard possible else { throw ScheduleError("never fires: no chosen month has the chosen day(s) of month") }
        }
    }

    var minuteList: [Int] { (0...59).filter { minutes & (1 << $0) != 0 } }
    var hourList: [Int] { (0...23).filter { hours & (1 << $0) != 0 } }

    /// Whether a local day fires: its month (1-12), day of month and weekday (0 Sunday).
    func matches(month: Int, dayOfMonth: Int, weekday: Int) -> Bool {
        guard months & (1 << month) != 0 else { return false }
        let byMonth = daysOfMonth & (1 << dayOfMonth) != 0
        let byWeek = daysOfWeek & (1 << weekday) != 0
        if anyDayOfMonth || anyDayOfWeek { return byMonth && byWeek }
        return byMonth || byWeek
    }

    /// One field: a comma-separated list of `*`, `v`, `a-b`, each optionally `/step`.
    private static func field(_ text: String, name: String, range: ClosedRange<Int>, names: [String], nameBase: Int) throws(ScheduleError) -> UInt64 {
        func fail(_ reason: String) -> ScheduleError { ScheduleError("\(name) field \"\(text)\": \(reason)") }
        func value(_ word: Substring) throws(ScheduleError) -> Int {
            if let index = names.firstIndex(of: word.lowercased()) { return index + nameBase }
            guard !word.isEmpty, word.utf8.count <= 4, word.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let number = Int(word) else {
                throw fail("\"\(word)\" is not a number" + (names.isEmpty ? "" : " or a name (\(names.first!.uppercased())…)"))
            }
            guard range.contains(number) else { throw fail("\(number) is out of \(range.lowerBound)-\(range.upperBound)") }
            return number
        }
        var bits: UInt64 = 0
        for item in text.split(separator: ",", omittingEmptySubsequences: false) {
            let parts = item.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
            var step = 1
            if parts.count == 2 {
                guard parts[1].utf8.count <= 4, parts[1].utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let number = Int(parts[1]), number >= 1 else {
                    throw fail("the step \"\(parts[1])\" must be a whole number of at least 1")
                }
                step = number
            }
            let base = parts[0]
            var low: Int, high: Int
            if base == "*" {
                (low, high) = (range.lowerBound, range.upperBound)
            } else if let dash = base.firstIndex(of: "-") {
                low = try value(base[base.startIndex..<dash])
                high = try value(base[base.index(after: dash)...])
                guard low <= high else { throw fail("the range \(base) runs backward") }
            } else {
                low = try value(base)
                high = parts.count == 2 ? range.upperBound : low  // `a/s`: from a to the end
            }
            for v in stride(from: low, through: high, by: step) { bits |= 1 << UInt64(v) }
        }
        return bits
    }
}

/// A Gregorian date stepped one day at a time (the cron search walks days in order, so only
/// its first day is converted from a day number).
struct CivilDate {
    var year: Int
    var month: Int
    var day: Int

    /// The date of `day` days since 1970-01-01 (1970-01-01 was a Thursday: weekday
    /// `((day % 7) + 11) % 7` with 0 Sunday).
    init(day: Int64) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(secondsFromGMT: 0)!
        let parts = calendar.dateComponents([.year, .month, .day], from: Date(timeIntervalSince1970: TimeInterval(day) * 86_400))
        (year, month, self.day) = (parts.year ?? 1970, parts.month ?? 1, parts.day ?? 1)
    }

    static func days(inMonth month: Int, of year: Int) -> Int {
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        return month == 2 ? (leap ? 29 : 28) : CronFields.monthDays[month - 1]
    }

    /// The next day, or the one before.
    mutating func step(forward: Bool) {
        if forward {
            day += 1
            guard day > Self.days(inMonth: month, of: year) else { return }
            day = 1
            month += 1
            if month > 12 { (month, year) = (1, year + 1) }
        } else {
            day -= 1
            guard day < 1 else { return }
            month -= 1
            if month < 1 { (month, year) = (12, year - 1) }
            day = Self.days(inMonth: month, of: year)
        }
    }
}
