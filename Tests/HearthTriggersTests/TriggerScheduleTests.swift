import Foundation
import Testing
@testable import HearthTriggers

/// The schedule syntax (cron and App Engine's `every N`) and its due times, from literals.
@Suite struct TriggerScheduleTests {
    /// Milliseconds of an RFC 3339 instant (`2026-03-08T07:30:00Z`, or with an offset).
    static func ms(_ text: String) -> Int64 {
        let formatter = ISO8601DateFormatter()
        guard let date = formatter.date(from: text) else { fatalError("bad literal \(text)") }
        return Int64(date.timeIntervalSince1970 * 1000)
    }

    static func schedule(_ expression: String, _ zone: String = "UTC") throws -> TriggerSchedule {
        try TriggerSchedule(expression, timeZone: zone)
    }

    /// The due times after `start`, `count` of them, as RFC 3339 UTC text.
    static func dues(_ schedule: TriggerSchedule, after start: String, count: Int) -> [String] {
        var times: [String] = []
        var at = ms(start)
        for _ in 0..<count {
            guard let next = schedule.next(after: at) else { break }
            times.append(ScheduledInvocation.scheduleTime(next))
            at = next
        }
        return times
    }

    @Test func everyMinuteAndItsLatestDueTime() throws {
        let minute = try Self.schedule("* * * * *")
        #expect(Self.dues(minute, after: "2026-12-02T03:15:20Z", count: 3) == ["2026-12-02T03:16:00Z", "2026-12-02T03:17:00Z", "2026-12-02T03:18:00Z"])
        #expect(minute.next(after: Self.ms("2026-12-02T03:16:00Z")) == Self.ms("2026-12-02T03:17:00Z"), "strictly after")
        #expect(minute.latest(atOrBefore: Self.ms("2026-12-02T03:16:00Z")) == Self.ms("2026-12-02T03:16:00Z"), "at or before")
        #expect(minute.latest(atOrBefore: Self.ms("2026-12-02T03:16:59Z")) == Self.ms("2026-12-02T03:16:00Z"))
    }

    @Test func stepsRangesListsAndNames() throws {
        #expect(Self.dues(try Self.schedule("5-20/5 * * * *"), after: "2026-01-01T00:00:00Z", count: 5)
                == ["2026-01-01T00:05:00Z", "2026-01-01T00:10:00Z", "2026-01-01T00:15:00Z", "2026-01-01T00:20:00Z", "2026-01-01T01:05:00Z"])
        #expect(Self.dues(try Self.schedule("50/5 23 * * *"), after: "2026-01-01T00:00:00Z", count: 3)
                == ["2026-01-01T23:50:00Z", "2026-01-01T23:55:00Z", "2026-01-02T23:50:00Z"], "a/s runs from a to the field's end")
        #expect(Self.dues(try Self.schedule("0 0 1 jan,JUL *"), after: "2026-01-01T00:00:00Z", count: 2)
                == ["2026-07-01T00:00:00Z", "2027-01-01T00:00:00Z"])
        // Business hours: Friday 17:45 is followed by Monday 09:00 (2026-12-04 is a Friday).
        #expect(Self.dues(try Self.schedule("*/15 9-17 * * MON-FRI"), after: "2026-12-04T17:30:00Z", count: 2)
                == ["2026-12-04T17:45:00Z", "2026-12-07T09:00:00Z"])
        // 7 and 0 are both Sunday (2026-12-06).
        #expect(Self.dues(try Self.schedule("0 8 * * 7"), after: "2026-12-02T00:00:00Z", count: 1) == ["2026-12-06T08:00:00Z"])
        #expect(Self.dues(try Self.schedule("0 8 * * 0"), after: "2026-12-02T00:00:00Z", count: 1) == ["2026-12-06T08:00:00Z"])
        // Both day fields restricted: either fires (the 13th, and Fridays).
        #expect(Self.dues(try Self.schedule("0 0 13 * FRI"), after: "2026-12-01T00:00:00Z", count: 3)
                == ["2026-12-04T00:00:00Z", "2026-12-11T00:00:00Z", "2026-12-13T00:00:00Z"])
        // A day field starting with `*` (even stepped) leaves the other alone deciding: both must match.
        #expect(Self.dues(try Self.schedule("0 0 */2 * FRI"), after: "2026-12-01T00:00:00Z", count: 2)
                == ["2026-12-11T00:00:00Z", "2026-12-25T00:00:00Z"])
    }

    @Test func monthEndsAndTheTwentyNinthOfFebruary() throws {
        #expect(Self.dues(try Self.schedule("0 0 31 * *"), after: "2026-01-31T00:00:00Z", count: 3)
                == ["2026-03-31T00:00:00Z", "2026-05-31T00:00:00Z", "2026-07-31T00:00:00Z"], "months without a 31st are skipped")
        let leap = try Self.schedule("0 12 29 2 *")
        #expect(Self.dues(leap, after: "2026-01-01T00:00:00Z", count: 1) == ["2028-02-29T12:00:00Z"])
        #expect(leap.latest(atOrBefore: Self.ms("2027-06-01T00:00:00Z")) == Self.ms("2024-02-29T12:00:00Z"))
        // 2100 is not a leap year: the longest wait, eight years, is within the search.
        #expect(Self.dues(leap, after: "2096-03-01T00:00:00Z", count: 1) == ["2104-02-29T12:00:00Z"])
        #expect(leap.latest(atOrBefore: Self.ms("2104-02-28T00:00:00Z")) == Self.ms("2096-02-29T12:00:00Z"))
        let days = (Self.ms("2104-02-29T12:00:00Z") - Self.ms("2096-03-01T00:00:00Z")) / 86_400_000
        #expect(days < ScheduleLimits.searchDays)
        // The end of a year, and dates before 1970.
        #expect(Self.dues(try Self.schedule("59 23 31 12 *"), after: "2026-12-31T23:59:00Z", count: 1) == ["2027-12-31T23:59:00Z"])
        #expect(Self.dues(try Self.schedule("0 0 1 3 *"), after: "1960-02-29T00:00:00Z", count: 1) == ["1960-03-01T00:00:00Z"])
    }

    /// The cron search steps dates one day at a time: every step agrees with the calendar,
    /// forward and backward, across 2000 (a leap year) and 2100 (not one).
    @Test func steppingDatesAgreesWithTheCalendar() {
        let first = Self.ms("1999-12-01T00:00:00Z") / 86_400_000, last = Self.ms("2101-03-01T00:00:00Z") / 86_400_000
        var forward = CivilDate(day: first), backward = CivilDate(day: last)
        var mismatches = 0
        for offset in 1...(last - first) {
            forward.step(forward: true)
            backward.step(forward: false)
            let expectedForward = CivilDate(day: first + offset), expectedBackward = CivilDate(day: last - offset)
            if (forward.year, forward.month, forward.day) != (expectedForward.year, expectedForward.month, expectedForward.day) { mismatches += 1 }
            if (backward.year, backward.month, backward.day) != (expectedBackward.year, expectedBackward.month, expectedBackward.day) { mismatches += 1 }
        }
        #expect(mismatches == 0)
        #expect(CivilDate.days(inMonth: 2, of: 2000) == 29 && CivilDate.days(inMonth: 2, of: 2100) == 28 && CivilDate.days(inMonth: 2, of: 2028) == 29)
    }

    @Test func aTimeTheClockSkipsDoesNotFireAndARepeatedOneFiresOnce() throws {
        // New York, 2026-03-08: 02:00 EST becomes 03:00 EDT; 02:30 does not exist that day.
        let skipped = try Self.schedule("30 2 * * *", "America/New_York")
        #expect(Self.dues(skipped, after: "2026-03-07T08:00:00Z", count: 2) == ["2026-03-09T06:30:00Z", "2026-03-10T06:30:00Z"])
        #expect(Self.dues(skipped, after: "2026-03-06T08:00:00Z", count: 1) == ["2026-03-07T07:30:00Z"], "02:30 EST the day before")
        // 2026-11-01: 02:00 EDT becomes 01:00 EST; 01:30 happens twice and fires at the first.
        let repeated = try Self.schedule("30 1 * * *", "America/New_York")
        #expect(Self.dues(repeated, after: "2026-11-01T04:00:00Z", count: 2) == ["2026-11-01T05:30:00Z", "2026-11-02T06:30:00Z"])
        #expect(repeated.latest(atOrBefore: Self.ms("2026-11-01T06:45:00Z")) == Self.ms("2026-11-01T05:30:00Z"))
        // Every half hour across the repeated hour: its wall-clock times fire once each.
        #expect(Self.dues(try Self.schedule("*/30 * * * *", "America/New_York"), after: "2026-11-01T04:50:00Z", count: 4)
                == ["2026-11-01T05:00:00Z", "2026-11-01T05:30:00Z", "2026-11-01T07:00:00Z", "2026-11-01T07:30:00Z"])
        // A zone east of UTC, and a half-hour one.
        #expect(Self.dues(try Self.schedule("0 9 * * *", "Europe/Paris"), after: "2026-07-01T00:00:00Z", count: 1) == ["2026-07-01T07:00:00Z"])
        #expect(Self.dues(try Self.schedule("0 9 * * *", "Asia/Kolkata"), after: "2026-07-01T00:00:00Z", count: 1) == ["2026-07-01T03:30:00Z"])
    }

    @Test func everyNMinutesOrHoursCountsFromTheEpoch() throws {
        let five = try Self.schedule("every 5 minutes")
        #expect(Self.dues(five, after: "2026-12-02T03:13:20Z", count: 2) == ["2026-12-02T03:15:00Z", "2026-12-02T03:20:00Z"])
        #expect(five.latest(atOrBefore: Self.ms("2026-12-02T03:19:59Z")) == Self.ms("2026-12-02T03:15:00Z"))
        #expect(Self.dues(try Self.schedule("Every 2 hours"), after: "2026-12-02T03:00:00Z", count: 1) == ["2026-12-02T04:00:00Z"])
        #expect(Self.dues(try Self.schedule("every 1 minute"), after: "2026-12-02T03:00:00Z", count: 1) == ["2026-12-02T03:01:00Z"])
        #expect(Self.dues(try Self.schedule("every 30 mins", "Asia/Kolkata"), after: "2026-12-02T03:00:00Z", count: 1)
                == ["2026-12-02T03:30:00Z"], "the time zone does not move them")
        // The limits, crossed.
        _ = try Self.schedule("every \(ScheduleLimits.maxEveryMinutes) minutes")
        _ = try Self.schedule("every \(ScheduleLimits.maxEveryHours) hours")
        #expect(throws: ScheduleError.self) { try Self.schedule("every \(ScheduleLimits.maxEveryMinutes + 1) minutes") }
        #expect(throws: ScheduleError.self) { try Self.schedule("every \(ScheduleLimits.maxEveryHours + 1) hours") }
    }

    @Test(arguments: [
        ("", "five cron fields"), ("* * * *", "found 4 field(s)"), ("* * * * * *", "found 6 field(s)"),
        ("60 * * * *", "minute field \"60\": 60 is out of 0-59"), ("* 24 * * *", "hour field"), ("* * 0 * *", "day-of-month field"),
        ("* * * 13 *", "month field"), ("* * * * 8", "day-of-week field"), ("*/0 * * * *", "the step \"0\""),
        ("5-1 * * * *", "runs backward"), ("a * * * *", "\"a\" is not a number"), ("* * * FOO *", "or a name (JAN…)"),
        ("1,,2 * * * *", "\"\" is not a number"), ("-1 * * * *", "\"\" is not a number"), ("0 0 30 2 *", "never fires"),
        ("0 0 31 4,6,9,11 *", "never fires"), ("@hourly", "\"@hourly\" is not supported"), ("every 0 minutes", "N must be 1"),
        ("every 5 seconds", "every N minutes"), ("every day 09:00", "write a cron expression"),
        ("every 5 minutes from 09:00 to 17:00", "not supported"), ("every -5 minutes", "not supported"),
    ])
    func anInvalidExpressionSaysWhy(expression: String, reason: String) {
        do {
            _ = try TriggerSchedule(expression)
            Issue.record("\(expression) was accepted")
        } catch {
            #expect(error.description.contains(reason), "\(expression): \(error.description)")
        }
    }

    @Test func theExpressionAndTimeZoneLengthsAreBounded() throws {
        let padded = "* * * * *" + String(repeating: " ", count: ScheduleLimits.maxExpressionLength - 9)
        _ = try TriggerSchedule(padded)
        #expect(throws: ScheduleError("longer than \(ScheduleLimits.maxExpressionLength) bytes")) { try TriggerSchedule(padded + " ") }
        #expect(throws: ScheduleError.self) { try TriggerSchedule("* * * * *", timeZone: "Mars/Olympus_Mons") }
        #expect(throws: ScheduleError.self) { try TriggerSchedule("* * * * *", timeZone: "") }
        #expect(throws: ScheduleError.self) { try TriggerSchedule("* * * * *", timeZone: "../../etc/passwd") }
        let long = "America/" + String(repeating: "x", count: ScheduleLimits.maxTimeZoneLength - 7)
        #expect(long.utf8.count == ScheduleLimits.maxTimeZoneLength + 1)
        #expect(throws: ScheduleError.self) { try TriggerSchedule("* * * * *", timeZone: long) }
        #expect(try TriggerSchedule("* * * * *").timeZoneName == "UTC")
    }

    @Test func theRequestIsCloudSchedulersAndThePayloadNamesTheDueTime() throws {
        var definition = TriggerDefinition(name: "weather", kind: .written, ref: try RefPattern("/"),
                                           url: try .init("http://127.0.0.1:9/fn"))
        definition.schedule = try Self.schedule("every 5 minutes")
        definition.headers = ["Authorization": "Bearer x"]
        let request = try CloudEventEncoding.request(id: "i-1", at: Self.ms("2026-12-02T03:15:00Z"), payload: [], trigger: definition,
                                                     origin: EventOrigin(instance: "hearth", databaseHost: "h"))
        #expect(request.method == "POST" && request.body.isEmpty)
        let headers = Dictionary(request.headers.map { ($0.name, $0.value) }, uniquingKeysWith: { a, _ in a })
        #expect(headers["X-CloudScheduler-ScheduleTime"] == "2026-12-02T03:15:00Z")
        #expect(headers["X-CloudScheduler-JobName"] == "weather")
        #expect(headers["Authorization"] == "Bearer x")
        #expect(!headers.keys.contains { $0.lowercased().hasPrefix("ce-") })
        let payload = String(decoding: ScheduledInvocation.payload(definition.schedule!, dueAt: Self.ms("2026-12-02T03:15:00Z")), as: UTF8.self)
        #expect(payload.contains("\"scheduleTime\":\"2026-12-02T03:15:00Z\""))
    }
}
