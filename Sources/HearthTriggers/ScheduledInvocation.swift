import HearthHTTPClient
import HearthJSON

/// A schedule's due time as Cloud Scheduler invokes a function (what `firebase-functions`'
/// `scheduler_fn.on_schedule` reads): a POST without a body, the due time in
/// `X-CloudScheduler-ScheduleTime` (RFC 3339, UTC) and the trigger's name in
/// `X-CloudScheduler-JobName`.
enum ScheduledInvocation {
    static let scheduleTimeHeader = "X-CloudScheduler-ScheduleTime"
    static let jobNameHeader = "X-CloudScheduler-JobName"
    /// Headers Hearth sets on a schedule's request; a trigger's `headers` may not.
    static let reservedHeaders: Set<String> = ["x-cloudscheduler", "x-cloudscheduler-schedule-time", "x-cloudscheduler-scheduletime",
                                               "x-cloudscheduler-jobname", "user-agent"]

    /// The stored event of one due time (the outbox keeps it opaque; `hearth triggers dead`
    /// shows it): `{"schedule", "timeZone", "scheduleTime"}`.
    static func payload(_ schedule: TriggerSchedule, dueAt: Int64) -> [UInt8] {
        JSONWriter.write(.object([
            "schedule": .string(schedule.expression), "timeZone": .string(schedule.timeZoneName),
            "scheduleTime": .string(scheduleTime(dueAt)),
        ]))
    }

    /// The request for the due time `at` (ms) of `trigger`.
    static func request(at: Int64, trigger: TriggerDefinition) -> HTTPClientRequest {
        var headers: [(name: String, value: String)] = [
            ("User-Agent", "Google-Cloud-Scheduler"), ("X-CloudScheduler", "true"),
            (jobNameHeader, trigger.name), (scheduleTimeHeader, scheduleTime(at)),
        ]
        for (name, value) in trigger.headers.sorted(by: { $0.key < $1.key }) { headers.append((name, value)) }
        return HTTPClientRequest(method: "POST", url: trigger.url, headers: headers, body: [])
    }

    /// `2026-12-02T03:15:00Z` (due times are whole minutes; milliseconds only when not).
    static func scheduleTime(_ milliseconds: Int64) -> String {
        let text = CloudEventEncoding.rfc3339(milliseconds: milliseconds)
        return text.hasSuffix(".000Z") ? String(text.dropLast(5)) + "Z" : text
    }
}
