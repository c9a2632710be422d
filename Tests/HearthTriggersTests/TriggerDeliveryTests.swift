import Dispatch
import Foundation
import HearthDatabase
import HearthHTTPClient
import HearthJSON
import HearthRules
import HearthSQLite
import HearthStore
import HearthTesting
import Logging
import Synchronization
import Testing
@testable import HearthTriggers

/// Delivery over a real SQLite outbox to a real listener on port 0.
@Suite struct TriggerDeliveryTests {
    /// What a receiver got, and how it answers (statuses in turn; 200 once they run out).
    final class Receiver: Sendable {
        final class Log: Sendable {
            let requests = Mutex<[ReceivedRequest]>([])
            let answers: Mutex<[Int]>
            init(answers: [Int]) { self.answers = Mutex(answers) }
        }
        let log: Log
        let listener: LoopbackListener

        init(answers: [Int] = []) throws {
            let log = Log(answers: answers)
            listener = try LoopbackListener { socket in
                guard let request = socket.readRequest() else { return }
                let status = log.answers.withLock { $0.isEmpty ? 200 : $0.removeFirst() }
                log.requests.withLock { $0.append(request) }
                try? socket.respond(status)
            }
            self.log = log
        }

        var received: [ReceivedRequest] { log.requests.withLock { $0 } }
    }

    final class Box: Sendable { let delivery = Mutex<TriggerDelivery?>(nil) }

    let directory = TemporaryDirectory()
    let store: SQLiteTreeStore
    let box = Box()

    init() throws {
        let box = self.box
        store = try SQLiteTreeStore(directory: directory.path, onDurable: { changes in box.delivery.withLock { $0 }?.committed(changes) })
    }

    static func path(_ text: String) -> DataPath { try! DataPath(string: text) }

    func delivery(_ triggers: [TriggerDefinition], maxPending: Int = TriggerLimits.maxPendingPerTrigger,
                  maxStoredBytes: Int64 = TriggerLimits.defaultMaxStoredBytes,
                  deadLetterRetentionMilliseconds: Int64 = TriggerLimits.deadLetterRetentionSeconds * 1000,
                  clock: @escaping @Sendable () -> Int64 = WallClock.milliseconds) -> (TriggerDelivery, Database) {
        let delivery = TriggerDelivery(outbox: store.triggerOutbox, origin: EventOrigin(instance: "hearth", databaseHost: "127.0.0.1:9"),
                                       logger: Logger(label: "test"), clock: clock, maxPending: maxPending, maxStoredBytes: maxStoredBytes,
                                       deadLetterRetentionMilliseconds: deadLetterRetentionMilliseconds, backoffBaseMilliseconds: 20)
        delivery.replace(triggers)
        delivery.start(databaseHost: "127.0.0.1:9")
        box.delivery.withLock { $0 = delivery }
        let policy = RulesAccessPolicy(rules: try! RuleSet.compile(#"{"rules": {".read": true, ".write": true}}"#))
        return (delivery, Database(store: store, policy: policy, effects: delivery.effects(for:)))
    }

    static func trigger(_ name: String, port: Int, retry: Bool = true, ref: String = "/users/{uid}/favorites/{favId}") -> TriggerDefinition {
        TriggerDefinition(name: name, kind: .written, ref: try! RefPattern(ref), url: try! HTTPURL("http://127.0.0.1:\(port)/\(name)"), retry: retry)
    }

    func write(_ database: Database, _ path: String, _ value: JSONValue?, as caller: Caller = Caller(auth: .null, isAdmin: true)) async throws {
        _ = try await withCheckedContinuation { continuation in
            database.write(.set(WriteEntry(path: Self.path(path), value: value)), as: caller) { continuation.resume(returning: $0) }
        }.get()
    }

    @Test func eventsArriveInCommitOrderAsCloudEvents() async throws {
        let receiver = try Receiver()
        defer { receiver.listener.stop() }
        var trigger = Self.trigger("fav", port: receiver.listener.port)
        trigger.hmacSecret = "0123456789abcdef"
        trigger.maxConcurrency = 1  // one at a time: the whole trigger in commit order
        let (delivery, database) = delivery([trigger])
        defer { delivery.close() }
        let user = Caller(auth: .object(["uid": .string("u1")]))
        for index in 0..<5 {
            try await write(database, "/users/u1/favorites/f\(index)", .object(["name": .string("c\(index)")]), as: user)
        }
        try await write(database, "/users/u1/other", .int(1))  // no match: no event
        try await waitUntil("five deliveries") { receiver.received.count == 5 }
        let received = receiver.received
        #expect(received.map { $0.header("ce-ref") } == (0..<5).map { "users/u1/favorites/f\($0)" })
        #expect(received.allSatisfy { $0.header("ce-authtype") == "app_user" && $0.header("ce-authid") == "u1" })
        let ids = received.compactMap { $0.header("ce-id") }
        #expect(Set(ids).count == 5)
        let body = try JSONParser.parse(received[0].body)
        #expect(body == .object(["data": .null, "delta": .object(["name": .string("c0")])]))
        #expect(received[0].header("X-Hearth-Signature") == "sha256=" + CloudEventEncoding.hex(CloudEventEncoding.hmacSHA256(key: Array("0123456789abcdef".utf8), received[0].body)))
        try await waitUntil("an empty outbox") { try store.triggerOutbox.pendingCount(trigger: "fav") == 0 }
        let status = try #require(delivery.status().first)
        #expect(status.status.delivered == 5 && status.pending == 0 && status.status.lastError == nil)
    }

    /// Failures are retried with backoff, the head first (at maxConcurrency 1 no later event
    /// overtakes it), with the same id every time.
    @Test func failuresAreRetriedInOrderWithAStableID() async throws {
        let receiver = try Receiver(answers: [500, 503, 500])
        defer { receiver.listener.stop() }
        var trigger = Self.trigger("fav", port: receiver.listener.port)
        trigger.maxConcurrency = 1
        let (delivery, database) = delivery([trigger])
        defer { delivery.close() }
        try await write(database, "/users/u1/favorites/a", .int(1))
        try await write(database, "/users/u1/favorites/b", .int(2))
        try await waitUntil("both delivered") { receiver.received.filter { $0.header("ce-ref") == "users/u1/favorites/b" }.count == 1 }
        let refs = receiver.received.compactMap { $0.header("ce-ref") }
        #expect(refs == Array(repeating: "users/u1/favorites/a", count: 4) + ["users/u1/favorites/b"])
        #expect(Set(receiver.received.prefix(4).compactMap { $0.header("ce-id") }).count == 1)
        #expect(delivery.status().first?.status.failedAttempts == 3)
    }

    @Test func withoutRetryOneFailureIsADeadLetter() async throws {
        let receiver = try Receiver(answers: [500])
        defer { receiver.listener.stop() }
        let (delivery, database) = delivery([Self.trigger("once", port: receiver.listener.port, retry: false)])
        defer { delivery.close() }
        try await write(database, "/users/u1/favorites/a", .int(1))
        try await write(database, "/users/u1/favorites/b", .int(2))
        try await waitUntil("two attempts") { receiver.received.count == 2 }
        try await waitUntil("one dead letter") { try store.triggerOutbox.deadLetters(trigger: "once", limit: 10).count == 1 }
        let dead = try store.triggerOutbox.deadLetters(trigger: "once", limit: 10)
        #expect(dead[0].reason.contains("retry: false") && dead[0].reason.contains("HTTP 500"))
        try await waitUntil("an empty outbox") { try store.triggerOutbox.pendingCount(trigger: "once") == 0 }
    }

    /// An event older than the maximum age is not sent again: it is a dead letter.
    @Test func eventsPastTheMaximumAgeAreDeadLetters() async throws {
        let receiver = try Receiver()
        defer { receiver.listener.stop() }
        let late: @Sendable () -> Int64 = { WallClock.milliseconds() + TriggerLimits.maxEventAgeSeconds * 1000 + 1 }
        let (delivery, database) = delivery([Self.trigger("fav", port: receiver.listener.port)], clock: late)
        defer { delivery.close() }
        try await write(database, "/users/u1/favorites/a", .int(1))
        try await waitUntil("a dead letter") { try store.triggerOutbox.deadLetters(trigger: "fav", limit: 10).count == 1 }
        #expect(try store.triggerOutbox.deadLetters(trigger: "fav", limit: 10)[0].reason.contains("maxEventAge"))
        #expect(receiver.received.isEmpty)
    }

    /// A receiver that is down never refuses a write: past the bound, the newest pending
    /// events go to the dead letters, counted.
    @Test func pastThePendingBoundTheNewestAreDeadLetters() async throws {
        let refusing = try RefusingPort()  // nobody listens: every attempt is refused
        defer { refusing.release() }  // held (and refusing) to the end
        let bound = 3
        let (delivery, database) = delivery([Self.trigger("fav", port: refusing.port)], maxPending: bound)
        defer { delivery.close() }
        for index in 0..<(bound + 2) {
            try await write(database, "/users/u1/favorites/f\(index)", .int(Int64(index)))
        }
        try await waitUntil("the excess moved", showing: "\((try? store.triggerOutbox.pendingCount(trigger: "fav")) ?? -1) pending, "
                            + "\((try? store.triggerOutbox.deadLetters(trigger: "fav", limit: 10).count) ?? -1) dead, \(delivery.status())") {
            try store.triggerOutbox.deadLetters(trigger: "fav", limit: 10).count == 2
        }
        #expect(try store.triggerOutbox.pendingCount(trigger: "fav") == bound)
        let dead = try store.triggerOutbox.deadLetters(trigger: "fav", limit: 10)
        #expect(dead.allSatisfy { $0.reason.hasPrefix("backlog") })
        #expect(dead.map { try! JSONParser.parse($0.record.payload).objectValue?["ref"] } == [.string("users/u1/favorites/f3"), .string("users/u1/favorites/f4")])
        #expect(delivery.status().first?.status.backlogOverflow == 2)
        #expect(delivery.status().first?.status.lastError == "connection refused")
    }

    /// The byte budget with a receiver that fails every event (retry false): its dead
    /// letters are bounded, the oldest deleted first, counted; every write committed.
    /// Each write waits for its event's attempt, so no more than one event (well under the
    /// budget) is ever pending: what goes is dead letters only. (Written all at once, the
    /// budget may rightly drop the newest pending ones before they are attempted, as
    /// `aHungReceiverDoesNotHoldTheBudgetBack` shows.)
    @Test func pastTheByteBudgetTheOldestDeadLettersAreDeleted() async throws {
        let receiver = try Receiver(answers: Array(repeating: 500, count: 8))
        defer { receiver.listener.stop() }
        let budget: Int64 = 3 * 1024
        let (delivery, database) = delivery([Self.trigger("once", port: receiver.listener.port, retry: false)], maxStoredBytes: budget)
        defer { delivery.close() }
        let big = JSONValue.string(String(repeating: "x", count: 1000))
        for index in 0..<8 {
            try await write(database, "/users/u1/favorites/f\(index)", big)
            try await waitUntil("attempt \(index + 1)", showing: "\(receiver.received.count) attempts, \(delivery.status())") {
                receiver.received.count == index + 1
            }
        }
        try await waitUntil("the outbox within its budget") {
            try store.triggerOutbox.pendingCount(trigger: "once") == 0
                && (try store.triggerOutbox.storedBytes(trigger: "once")["once"]?.total ?? 0) <= budget
        }
        let dead = try store.triggerOutbox.deadLetters(trigger: "once", limit: 100)
        #expect(dead.count >= 1 && dead.count < 8)
        // The newest stay: the kept dead letters are the last ones written.
        #expect(dead.compactMap(\.ref) == (8 - dead.count..<8).map { "/users/u1/favorites/f\($0)" })
        try await waitUntil("the count") { delivery.status().first?.status.deadRemoved == 8 - dead.count }
        #expect(delivery.status().first?.storedBytes == (try store.triggerOutbox.storedBytes(trigger: "once")["once"]?.total))
        #expect(try store.readSync { try $0.value(at: Self.path("/users/u1/favorites")) }.objectValue?.count == 8, "no write refused")
    }

    /// A receiver that holds its attempt (it never answers) does not hold the budget back:
    /// past it the newest pending events are dropped undelivered, the oldest kept in order.
    @Test func aHungReceiverDoesNotHoldTheBudgetBack() async throws {
        let release = DispatchSemaphore(value: 0)
        let attempts = Mutex(0)
        let hung = try LoopbackListener { socket in
            _ = socket.readRequest()
            attempts.withLock { $0 += 1 }
            release.wait()
        }
        defer { hung.stop() }
        let budget: Int64 = 3 * 1024
        var trigger = Self.trigger("fav", port: hung.port)
        trigger.timeoutSeconds = TriggerLimits.timeoutSecondsRange.upperBound
        trigger.maxConcurrency = 1  // one attempt at a time: the rest wait behind the hung one
        let (delivery, database) = delivery([trigger], maxStoredBytes: budget)
        defer {
            release.signal()  // the attempt ends, so closing does not wait for it
            delivery.close()
        }
        let big = JSONValue.string(String(repeating: "x", count: 1000))
        try await write(database, "/users/u1/favorites/f0", big)
        try await waitUntil("the first attempt under way") { attempts.withLock { $0 } == 1 }
        for index in 1..<8 { try await write(database, "/users/u1/favorites/f\(index)", big) }
        try await waitUntil("the pending events within the budget") {
            (try store.triggerOutbox.storedBytes(trigger: "fav")["fav"]?.total ?? 0) <= budget
        }
        let pending = try store.triggerOutbox.pending(trigger: "fav", now: .max, limit: 100)
        let refs = pending.map { try! JSONParser.parse($0.payload).objectValue?["ref"]?.stringValue ?? "" }
        #expect(!pending.isEmpty && pending.count < 8)
        #expect(refs == (0..<pending.count).map { "users/u1/favorites/f\($0)" }, "the oldest are kept, in order")
        #expect(attempts.withLock { $0 } == 1, "still the first attempt")
        try await waitUntil("the count") { delivery.status().first?.status.budgetDropped == 8 - pending.count }
    }

    /// The dead letters' retention: the keeper's first round deletes those given up more
    /// than `deadLetterRetentionSeconds` ago, of any trigger (also one no longer declared),
    /// and keeps younger ones; each deletion is counted on its own trigger.
    @Test func deadLettersPastTheRetentionAreDeleted() async throws {
        let outbox = store.triggerOutbox
        try store.writeSync(.set(WriteEntry(path: Self.path("/seed"), value: 1)), check: nil) { _, _ in
            [OutboxEvent(trigger: "fav", payload: [1]), OutboxEvent(trigger: "fav", payload: [2]), OutboxEvent(trigger: "gone", payload: [3])]
        }
        let fav = try outbox.pending(trigger: "fav", now: .max, limit: 10)
        let gone = try outbox.pending(trigger: "gone", now: .max, limit: 10)
        let now = WallClock.milliseconds()
        let retention = TriggerLimits.deadLetterRetentionSeconds * 1000
        try outbox.kill(id: fav[0].id, reason: "old", at: now - retention - 1)
        try outbox.kill(id: fav[1].id, reason: "young", at: now - retention + 3_600_000)
        try outbox.kill(id: gone[0].id, reason: "old", at: now - retention - 1)
        let receiver = try Receiver()
        defer { receiver.listener.stop() }
        let (delivery, _) = delivery([Self.trigger("fav", port: receiver.listener.port)])
        defer { delivery.close() }
        try await waitUntil("the old ones deleted, counted") {
            try outbox.deadLetters(trigger: nil, limit: 10).map(\.reason) == ["young"] && delivery.status().first?.status.deadRemoved == 1
        }
        // Counted on its own trigger: "gone" runs nowhere here, so fav's count is fav's only.
        #expect(delivery.status().map(\.status.name) == ["fav"])
    }

    /// A reload starts new triggers, stops removed ones and keeps the rest.
    @Test func replacingTheSetStartsAndStopsDeliverers() async throws {
        let receiver = try Receiver()
        defer { receiver.listener.stop() }
        let (delivery, database) = delivery([Self.trigger("a", port: receiver.listener.port)])
        defer { delivery.close() }
        delivery.replace([Self.trigger("b", port: receiver.listener.port, ref: "/x/{id}")])
        #expect(delivery.triggerNames == ["b"])
        try await write(database, "/users/u1/favorites/f", .int(1))  // trigger a is gone: no event
        try await write(database, "/x/1", .int(1))
        try await waitUntil("b's event") { receiver.received.count == 1 }
        #expect(receiver.received[0].target == "/b")
        #expect(try store.triggerOutbox.pendingCount(trigger: "a") == 0)
    }
}
