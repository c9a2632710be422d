import HearthJSON
import HearthStore
import Testing
@testable import HearthTriggers

/// Schedules in the triggers file: read beside database triggers, every bad field named.
@Suite struct ScheduleConfigTests {
    static func parse(_ triggers: String) throws(TriggerConfigError) -> [TriggerDefinition] {
        try TriggerConfig.parse(Array("{\"triggers\": [\(triggers)]}".utf8), path: "t.json")
    }

    @Test func aScheduleIsReadBesideADatabaseTrigger() throws {
        let definitions = try Self.parse("""
            {"name": "alerts", "schedule": "every 5 minutes", "url": "http://127.0.0.1:8080/alerts", "retry": true},
            {"name": "daily", "schedule": "0 9 * * MON-FRI", "timeZone": "Europe/Paris", "url": "http://127.0.0.1:8080/daily",
             "timeoutSeconds": 300, "headers": {"Authorization": "Bearer s3cret"}},
            {"name": "fav", "event": "written", "ref": "/users/{uid}", "url": "http://127.0.0.1:8080/fav"}
            """)
        #expect(definitions.map(\.name) == ["alerts", "daily", "fav"])
        #expect(definitions[0].schedule?.expression == "every 5 minutes" && definitions[0].schedule?.timeZoneName == "UTC")
        #expect(definitions[0].retry && !definitions[1].retry)
        #expect(definitions[1].schedule?.timeZoneName == "Europe/Paris" && definitions[1].timeoutSeconds == 300)
        #expect(definitions[1].headers == ["Authorization": "Bearer s3cret"])
        #expect(definitions[2].schedule == nil)
        #expect(definitions.map(\.shownEvent) == ["schedule", "schedule", "written"])
        #expect(definitions[1].shownRef == "0 9 * * MON-FRI (Europe/Paris)")
        // A schedule matches no write.
        let write = WriteOperation.set(WriteEntry(path: .root, value: ["users": ["u": 1]]))
        #expect(!TriggerMatcher(triggers: Array(definitions.prefix(2)), instance: "hearth").mayMatch(write))
        #expect(TriggerMatcher(triggers: definitions, instance: "hearth").mayMatch(write))
    }

    @Test(arguments: [
        (#"{"name": "s", "schedule": 5, "url": "http://h/"}"#, #"trigger "s": "schedule" must be a string"#),
        (#"{"name": "s", "schedule": "* * *", "url": "http://h/"}"#, #"trigger "s": "schedule": must be five cron fields"#),
        (#"{"name": "s", "schedule": "61 * * * *", "url": "http://h/"}"#, #""schedule": minute field "61""#),
        (#"{"name": "s", "schedule": "* * * * *", "timeZone": "Nowhere/City", "url": "http://h/"}"#, #""timeZone": unknown time zone "Nowhere/City""#),
        (#"{"name": "s", "schedule": "* * * * *", "timeZone": 1, "url": "http://h/"}"#, #""timeZone" must be a string"#),
        (#"{"name": "s", "schedule": "* * * * *", "ref": "/a", "url": "http://h/"}"#, #"unknown field "ref" for a schedule"#),
        (#"{"name": "s", "schedule": "* * * * *", "event": "written", "url": "http://h/"}"#, #"unknown field "event" for a schedule"#),
        (#"{"name": "s", "schedule": "* * * * *", "hmacSecret": "0123456789abcdef", "url": "http://h/"}"#, #"unknown field "hmacSecret""#),
        (#"{"name": "s", "schedule": "* * * * *"}"#, #""url" is missing"#),
        (#"{"name": "s", "schedule": "* * * * *", "url": "ftp://h/"}"#, #""url""#),
        (#"{"name": "s s", "schedule": "* * * * *", "url": "http://h/"}"#, #""name" must be"#),
        (#"{"schedule": "* * * * *", "url": "http://h/"}"#, #""name" is missing"#),
        (#"{"name": "s", "schedule": "* * * * *", "url": "http://h/", "retry": "yes"}"#, #""retry" must be true or false"#),
        (#"{"name": "s", "schedule": "* * * * *", "url": "http://h/", "timeoutSeconds": 0}"#, #""timeoutSeconds" must be"#),
        (#"{"name": "s", "schedule": "* * * * *", "url": "http://h/", "headers": {"X-CloudScheduler-JobName": "x"}}"#, #"X-CloudScheduler-JobName is set by Hearth"#),
        (#"{"name": "s", "schedule": "* * * * *", "url": "http://h/", "headers": {"User-Agent": "x"}}"#, #"User-Agent is set by Hearth"#),
    ])
    func aBadFieldIsNamed(trigger: String, reason: String) {
        do {
            _ = try Self.parse(trigger)
            Issue.record("accepted: \(trigger)")
        } catch {
            #expect(error.description.contains(reason), "\(error.description)")
            #expect(error.line == 1)
        }
    }

    @Test func twoSchedulesMayNotShareAName() {
        #expect(throws: TriggerConfigError.self) {
            try Self.parse(#"{"name": "s", "schedule": "* * * * *", "url": "http://h/"}, {"name": "s", "schedule": "every 5 minutes", "url": "http://h/"}"#)
        }
    }
}
