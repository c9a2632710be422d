import Foundation
import HearthHTTPClient
import HearthSQLite
import HearthStore
import HearthTesting
import Logging
import Synchronization
import Testing
@testable import HearthTriggers

/// The schedules' runner over a real SQLite outbox, on a clock the test moves: due times
/// become events once, a long downtime makes one event, and the deliverer sends them as
/// Cloud Scheduler does.
@Suite struct ScheduleRunnerTests {
    let directory = TemporaryDirectory()
    let store: SQLiteTreeStore
    /// The test's clock (ms), moved by hand.
    final class Clock: Sendable {
        private let value = Atomic<Int64>(TriggerScheduleTests.ms("2026-12-02T12:00:45Z"))
        func read() -> Int64 { value.load(ordering: .relaxed) }
        func add(_ milliseconds: Int64) { value.add(milliseconds, ordering: .relaxed) }
    }
    let now = Clock()

    init() throws {
        store = try SQLiteTreeStore(directory: directory.path)
    }

    static func schedule(_ name: String, _ expression: String, url: String = "http://127.0.0.1:9/fn") throws -> TriggerDefinition {
        var definition = TriggerDefinition(name: name, kind: .written, ref: try RefPattern("/"), url: try HTTPURL(url), retry: true)
        definition.schedule = try TriggerSchedule(expression)
        return definition
    }

    func runner(_ definitions: [TriggerDefinition]) -> ScheduleRunner {
        let now = self.now
        let runner = ScheduleRunner(outbox: store.triggerOutbox, clock: { now.read() }, logger: Logger(label: "test"))
        runner.replace(definitions)
        return runner
    }

    @Test func aMonthDownRecordsOnlyTheLatestMissedDueTimeOnce() throws {
        let runner = runner([try Self.schedule("minutely", "* * * * *")])
        let recorded = Mutex<[String]>([])
        // The first look only marks: a new schedule fires from its next due time.
        #expect(runner.round { name in recorded.withLock { $0.append(name) } } == 15_000, "sleeps until the next minute")
        #expect(try store.triggerOutbox.pendingCount(trigger: "minutely") == 0)
        // Thirty days later (43,200 due times missed): one event, the latest.
        now.add(30 * 86_400_000)
        _ = runner.round { name in recorded.withLock { $0.append(name) } }
        let events = try store.triggerOutbox.pending(trigger: "minutely", now: .max, limit: 100)
        #expect(events.map(\.at) == [TriggerScheduleTests.ms("2027-01-01T12:00:00Z")])
        #expect(recorded.withLock { $0 } == ["minutely"])
        // Looking again, here or from a fresh runner (a restart, or another process): nothing more.
        _ = runner.round { _ in }
        _ = self.runner([try Self.schedule("minutely", "* * * * *")]).round { _ in }
        #expect(try store.triggerOutbox.pendingCount(trigger: "minutely") == 1)
        // The next minute: one more.
        now.add(60_000)
        _ = self.runner([try Self.schedule("minutely", "* * * * *")]).round { _ in }
        #expect(try store.triggerOutbox.pending(trigger: "minutely", now: .max, limit: 100).map(\.at)
                == [TriggerScheduleTests.ms("2027-01-01T12:00:00Z"), TriggerScheduleTests.ms("2027-01-01T12:01:00Z")])
    }

    @Test func theRunnerSleepsAtMostItsBound() throws {
        let yearly = runner([try Self.schedule("yearly", "0 0 1 1 *")])
        #expect(yearly.round { _ in } == ScheduleLimits.maxSleepMilliseconds)
        let none = runner([])
        #expect(none.round { _ in } == ScheduleLimits.maxSleepMilliseconds)
        #expect(runner([try Self.schedule("fives", "every 5 minutes")]).round { _ in } == ScheduleLimits.maxSleepMilliseconds,
                "4 min 15 s to the next due time: the bound")
        #expect(runner([try Self.schedule("yearly", "0 0 1 1 *"), try Self.schedule("minutely", "* * * * *")]).round { _ in } == 15_000,
                "the earliest next due time of all")
    }

    /// A store that cannot be written: nothing recorded, asked again within the backoff
    /// base rather than at the next due time.
    @Test func aStoreThatIsDownIsAskedAgainSoon() throws {
        let runner = runner([try Self.schedule("minutely", "* * * * *")])
        store.close()
        #expect(runner.round { _ in Issue.record("recorded on a closed store") } == TriggerLimits.backoffBaseMilliseconds)
        #expect(runner.round { _ in } == TriggerLimits.backoffBaseMilliseconds, "still asking")
    }

    /// Through the whole delivery: the receiver gets Cloud Scheduler's request once per due
    /// time, and nothing for the first look.
    @Test func theDeliveryInvokesTheReceiverOncePerDueTime() throws {
        let requests = Mutex<[ReceivedRequest]>([])
        let listener = try LoopbackListener { socket in
            guard let request = socket.readRequest() else { return }
            requests.withLock { $0.append(request) }
            try? socket.respond(200)
        }
        defer { listener.stop() }
        let now = self.now
        let delivery = TriggerDelivery(outbox: store.triggerOutbox, origin: EventOrigin(instance: "hearth", databaseHost: "h"),
                                       logger: Logger(label: "test"), clock: { now.read() })
        defer { delivery.close() }
        let definitions = [try Self.schedule("alerts", "every 5 minutes", url: "http://127.0.0.1:\(listener.port)/alerts")]
        func waitFor(_ count: Int) throws {
            let deadline = ContinuousClock.now + .seconds(30)
            while try requests.withLock({ $0.count }) < count || store.triggerOutbox.pendingCount(trigger: "alerts") > 0 {
                guard ContinuousClock.now < deadline else { throw LiveClientError("timed out waiting for \(count) request(s)") }
                Thread.sleep(forTimeInterval: 0.01)
            }
        }
        // The schedule's mark, as the runner's first look sets it (set here so the clock
        // cannot move before that look).
        #expect(try !store.triggerOutbox.recordDue(trigger: "alerts", schedule: definitions[0].schedule!.key,
                                                   dueAt: TriggerScheduleTests.ms("2026-12-02T12:00:00Z"), payload: []))
        delivery.replace(definitions)
        delivery.start(databaseHost: "h")
        now.add(10 * 60_000)
        delivery.replace(definitions)  // wakes the runner at once (it sleeps on the real clock)
        try waitFor(1)
        now.add(5 * 60_000)
        delivery.replace(definitions)
        try waitFor(2)
        let received = requests.withLock { $0 }
        #expect(received.count == 2)
        #expect(received.map(\.method) == ["POST", "POST"])
        #expect(received.map { $0.header("X-CloudScheduler-ScheduleTime") } == ["2026-12-02T12:10:00Z", "2026-12-02T12:15:00Z"])
        #expect(received.allSatisfy { $0.header("X-CloudScheduler-JobName") == "alerts" && $0.body.isEmpty && $0.target == "/alerts" })
        #expect(delivery.status().first?.status.delivered == 2)
    }

}
