import Foundation
import HearthDatabase
import HearthJSON
import HearthRules
import HearthSQLite
import HearthStore
import HearthTesting
import Logging
import Synchronization
import Testing
@testable import HearthTriggers

/// The loop guard (`TriggerRateGuard`) and the operators' overview (`TriggerOverview`).
@Suite struct TriggerRateGuardTests {
    final class ManualClock: Sendable {
        let now = Mutex<Int64>(1_000_000)
        var read: @Sendable () -> Int64 { { [self] in now.withLock { $0 } } }
        func advance(_ milliseconds: Int64) { now.withLock { $0 += milliseconds } }
    }

    static func event(_ trigger: String, _ ref: String = "users/u1/favorites/a") -> OutboxEvent {
        let payload = JSONWriter.write(.object(["ref": .string(ref), "type": .string("t"), "data": .null, "delta": .int(1),
                                                "authtype": .string("admin")]))
        return OutboxEvent(trigger: trigger, payload: payload)
    }

    @Test func pastTheBurstEventsAreMarkedAndTheRateRefills() {
        let clock = ManualClock()
        let guardian = TriggerRateGuard(eventsPerSecond: 10, burst: 5, clock: clock.read, logger: Logger(label: "test"))
        let first = guardian.admit((0..<7).map { _ in Self.event("loop") })
        #expect(first.map { TriggerRateGuard.isMarked($0.payload) } == [false, false, false, false, false, true, true])
        // Another trigger has its own bucket.
        #expect(guardian.admit([Self.event("other")]).allSatisfy { !TriggerRateGuard.isMarked($0.payload) })
        #expect(guardian.limited == ["loop": 2])
        clock.advance(200)  // 10/s: two tokens back
        let second = guardian.admit((0..<3).map { _ in Self.event("loop") })
        #expect(second.map { TriggerRateGuard.isMarked($0.payload) } == [false, false, true])
        clock.advance(60_000)  // refills up to the burst, not beyond
        let third = guardian.admit((0..<6).map { _ in Self.event("loop") })
        #expect(third.filter { TriggerRateGuard.isMarked($0.payload) }.count == 1)
        #expect(guardian.limited == ["loop": 4])
    }

    /// A trigger's own `maxEventsPerSecond` sets its bucket (burst: `rateBurstSeconds` of
    /// it); triggers without one keep the guard's rate.
    @Test func aTriggersOwnRateOverridesTheDefault() {
        let clock = ManualClock()
        let guardian = TriggerRateGuard(eventsPerSecond: 100, burst: 100, clock: clock.read, logger: Logger(label: "test"))
        let burst = 2 * TriggerLimits.rateBurstSeconds
        let own = guardian.admit((0..<(burst + 3)).map { _ in Self.event("slow") }, rates: ["slow": 2])
        #expect(own.filter { TriggerRateGuard.isMarked($0.payload) }.count == 3)
        let other = guardian.admit((0..<(burst + 3)).map { _ in Self.event("fast") }, rates: ["slow": 2])
        #expect(other.allSatisfy { !TriggerRateGuard.isMarked($0.payload) })
        clock.advance(1_000)  // 2/s: two tokens back for "slow"
        let later = guardian.admit((0..<3).map { _ in Self.event("slow") }, rates: ["slow": 2])
        #expect(later.map { TriggerRateGuard.isMarked($0.payload) } == [false, false, true])
        #expect(TriggerRateGuard.defaultEventsPerSecond == TriggerLimits.defaultEventsPerSecond)
    }

    /// A marked payload is still the same JSON (with one more member), so an operator's
    /// tools read its ref; an unmarked one is never taken for marked, nor another run's mark for ours.
    @Test func aMarkedPayloadStaysReadable() throws {
        let clock = ManualClock()
        let guardian = TriggerRateGuard(eventsPerSecond: 1, burst: 1, clock: clock.read, logger: Logger(label: "test"))
        let event = Self.event("loop", "users/u1/x")
        #expect(!TriggerRateGuard.isMarked(event.payload) && guardian.mark(of: event.payload) == nil)
        let marked = guardian.marked(event.payload, 7)
        #expect(TriggerRateGuard.isMarked(marked) && guardian.mark(of: marked) == 7)
        let parsed = try #require(JSONParser.parse(marked).objectValue)
        #expect(parsed.count == 6 && parsed["ref"] == .string("users/u1/x") && parsed["rateLimited"]?.stringValue != nil)
        let other = TriggerRateGuard(eventsPerSecond: 1, burst: 1, clock: clock.read, logger: Logger(label: "test"))
        #expect(other.mark(of: marked) == nil)
        // A mark is consumed once: the event it names is killed once, a resend delivers it.
        let admitted = guardian.admit([Self.event("loop"), Self.event("loop")])
        let record = OutboxRecord(id: 1, trigger: "loop", seq: 1, at: 0, payload: admitted[1].payload)
        #expect(!guardian.consume(OutboxRecord(id: 0, trigger: "loop", seq: 1, at: 0, payload: admitted[0].payload)))
        #expect(guardian.consume(record) && !guardian.consume(record))
        #expect(!other.consume(record))
        #expect(TriggerRateGuard.defaultBurst >= TriggerRateGuard.defaultEventsPerSecond)
    }

    /// End to end over a SQLite outbox and a receiver: events past the rate never reach the
    /// receiver; they are dead letters "rate limited", counted, and resending them delivers them.
    @Test func rateLimitedEventsAreDeadLettersThatCanBeResent() async throws {
        let receiver = try TriggerDeliveryTests.Receiver()
        defer { receiver.listener.stop() }
        let directory = TemporaryDirectory()
        let box = TriggerDeliveryTests.Box()
        let store = try SQLiteTreeStore(directory: directory.path, onDurable: { changes in box.delivery.withLock { $0 }?.committed(changes) })
        let clock = ManualClock()
        let delivery = TriggerDelivery(outbox: store.triggerOutbox, origin: EventOrigin(instance: "hearth", databaseHost: "127.0.0.1:9"),
                                       logger: Logger(label: "test"), clock: clock.read, eventsPerSecond: 1, burst: 3)
        defer { delivery.close() }
        var trigger = TriggerDeliveryTests.trigger("fav", port: receiver.listener.port)
        trigger.maxConcurrency = 1  // the deliveries are compared in commit order
        delivery.replace([trigger])
        delivery.start(databaseHost: "127.0.0.1:9")
        box.delivery.withLock { $0 = delivery }
        let policy = RulesAccessPolicy(rules: try RuleSet.compile(#"{"rules": {".read": true, ".write": true}}"#))
        let database = Database(store: store, policy: policy, effects: delivery.effects(for:))
        for index in 0..<5 {
            _ = try await withCheckedContinuation { continuation in
                database.write(.set(WriteEntry(path: TriggerDeliveryTests.path("/users/u1/favorites/f\(index)"), value: .int(Int64(index)))),
                               as: Caller(auth: .null, isAdmin: true)) { continuation.resume(returning: $0) }
            }.get()
        }
        let outbox = store.triggerOutbox
        try await waitUntil("three deliveries and two dead letters") {
            try receiver.received.count == 3 && outbox.deadLetters(trigger: "fav", limit: 10).count == 2
        }
        let dead = try outbox.deadLetters(trigger: "fav", limit: 10)
        #expect(dead.allSatisfy { $0.reason == TriggerRateGuard.reason })
        #expect(dead.map(\.ref) == ["/users/u1/favorites/f3", "/users/u1/favorites/f4"])
        #expect(receiver.received.compactMap { $0.header("ce-ref") } == (0..<3).map { "users/u1/favorites/f\($0)" })
        #expect(delivery.rateGuard.limited == ["fav": 2])
        try await waitUntil("the dead count") { delivery.status().first?.status.deadLettered == 2 }

        // The overview: the trigger declared, nothing pending, two dead letters; no secrets.
        let rows = try TriggerOverview.all(declared: delivery.definitions, outbox: outbox)
        #expect(rows == [TriggerOverview(name: "fav", event: "written", ref: "/users/{uid}/favorites/{favId}",
                                         url: "http://127.0.0.1:\(receiver.listener.port)/fav", retry: true,
                                         pending: 0, oldestPendingAt: nil, dead: 2,
                                         storedBytes: try #require(try outbox.storedBytes(trigger: "fav")["fav"]?.total),
                                         maxStoredBytes: TriggerLimits.defaultMaxStoredBytes, lastError: nil)])

        // Resent, they are delivered (their marks were consumed), in their order.
        #expect(try TriggerOverview.resendAll(trigger: "fav", outbox: outbox) == 2)
        delivery.resent()
        try await waitUntil("five deliveries") { receiver.received.count == 5 }
        #expect(receiver.received.compactMap { $0.header("ce-ref") } == (0..<5).map { "users/u1/favorites/f\($0)" })
        try await waitUntil("an empty outbox") { try outbox.pendingCount(trigger: "fav") == 0 && outbox.deadLetters(trigger: nil, limit: 10).isEmpty }
    }
}
