import Dispatch
import Foundation
import HearthDatabase
import HearthJSON
import HearthStore
import HearthTesting
import Synchronization
import Testing
@testable import HearthTriggers

/// Order per location, locations at once: over a real SQLite outbox to a real listener.
extension TriggerDeliveryTests {
    /// A receiver that answers per `ce-ref` and records what arrived, in arrival order, and
    /// the most requests it had under way at once.
    final class ByRef: Sendable {
        final class Log: Sendable {
            let arrived = Mutex<[String]>([])
            let active = Mutex((now: 0, most: 0))
        }
        let log = Log()
        let listener: LoopbackListener

        init(status: @escaping @Sendable (String) -> Int, pause: @escaping @Sendable (String) -> Void = { _ in }) throws {
            let log = self.log
            listener = try LoopbackListener { socket in
                guard let request = socket.readRequest() else { return }
                let ref = request.header("ce-ref") ?? ""
                log.active.withLock { $0.now += 1; $0.most = max($0.most, $0.now) }
                let delta = (try? JSONParser.parse(request.body))?.objectValue?["delta"] ?? .null
                log.arrived.withLock { $0.append(ref + "=" + String(decoding: JSONWriter.write(delta), as: UTF8.self)) }
                pause(ref)
                log.active.withLock { $0.now -= 1 }
                try? socket.respond(status(ref))
            }
        }

        var arrived: [String] { log.arrived.withLock { $0 } }
        var most: Int { log.active.withLock { $0.most } }
        func count(_ prefix: String) -> Int { arrived.filter { $0.hasPrefix(prefix) }.count }
    }

    /// One location's event fails every time: the 20 events at 20 other locations are all
    /// delivered while it keeps being retried, and it alone stays pending.
    @Test func aPoisonedLocationHoldsBackOnlyItself() async throws {
        let receiver = try ByRef(status: { $0 == "users/p/favorites/x" ? 500 : 200 })
        defer { receiver.listener.stop() }
        let (delivery, database) = delivery([Self.trigger("fav", port: receiver.listener.port)])
        defer { delivery.close() }
        try await write(database, "/users/p/favorites/x", .int(0))
        try await waitUntil("the poisoned event attempted") { receiver.count("users/p/") >= 1 }
        for index in 0..<20 { try await write(database, "/users/u\(index)/favorites/f", .int(Int64(index))) }
        try await waitUntil("the 20 healthy events delivered") { receiver.count("users/u") == 20 }
        try await waitUntil("the poisoned event retried") { receiver.count("users/p/") >= 2 }
        try await waitUntil("the healthy events out of the outbox") { try store.triggerOutbox.pendingCount(trigger: "fav") == 1 }
        let pending = try store.triggerOutbox.pending(trigger: "fav", now: .max, limit: 100)
        #expect(pending.count == 1 && pending[0].attempts >= 1 && pending[0].lastError == "HTTP 500")
        #expect(TriggerDeliverer.location(pending[0].payload) == "users/p/favorites/x")
        #expect(try store.triggerOutbox.deadLetters(trigger: "fav", limit: 10).isEmpty)
    }

    /// A poisoned location with more pending events than the deliverer's window
    /// (`maxBufferedEvents`) ahead of the healthy ones: its events are skipped as they are
    /// read, so the healthy events behind them are still delivered.
    @Test func aPoisonedLocationLargerThanTheWindowIsSkipped() async throws {
        let poison = "users/p/favorites/x"
        let receiver = try ByRef(status: { $0 == poison ? 500 : 200 })
        defer { receiver.listener.stop() }
        let (delivery, database) = delivery([Self.trigger("fav", port: receiver.listener.port)])
        defer { delivery.close() }
        let batches = TriggerLimits.maxBufferedEvents / 500 + 1
        for batch in 0..<batches {
            // Events stored as the matcher stores them, 500 per write, all at the poisoned location.
            try store.writeSync(.set(WriteEntry(path: Self.path("/filler/\(batch)"), value: .int(1))), check: nil) { _, _ in
                (0..<500).map { n in
                    OutboxEvent(trigger: "fav", payload: JSONWriter.write(.object([
                        "ref": .string(poison), "type": .string(TriggerEventKind.written.cloudEventType),
                        "data": .null, "delta": .int(Int64(batch * 500 + n)), "authtype": .string("admin")])))
                }
            }
        }
        delivery.resent()  // written past the matcher: no commit wake-up
        for index in 0..<20 { try await write(database, "/users/u\(index)/favorites/f", .int(Int64(index))) }
        try await waitUntil("the 20 healthy events delivered") { receiver.count("users/u") == 20 }
        #expect(receiver.count("users/p/") >= 1 && receiver.arrived.filter { $0.hasPrefix("users/p/") }.allSatisfy { $0 == poison + "=0" },
                "only the poisoned location's first event is attempted")
        try await waitUntil("the healthy events out of the outbox") { try store.triggerOutbox.pendingCount(trigger: "fav") == batches * 500 }
    }

    /// Under random receiver latency each location's events arrive in commit order, and two
    /// locations are under way at once: the first event of `a` is held by the receiver
    /// until an event of `b` arrives (a trigger delivering one at a time never gets there).
    @Test func eachLocationInCommitOrderLocationsAtOnce() async throws {
        let bArrived = DispatchSemaphore(value: 0)
        let hold = Mutex((held: false, overlapped: false))
        let receiver = try ByRef(status: { _ in 200 }, pause: { ref in
            if ref == "users/b/favorites/f" {
                bArrived.signal()
            } else if ref == "users/a/favorites/f", hold.withLock({ state in defer { state.held = true }; return !state.held }) {
                // a's first call only, held (30 s safety net) until a call for b arrives.
                let arrived = bArrived.wait(timeout: .now() + .seconds(30)) == .success
                hold.withLock { $0.overlapped = arrived }
            }
            Thread.sleep(forTimeInterval: Double(Int.random(in: 0...15)) / 1000)
        })
        defer { receiver.listener.stop() }
        let (delivery, database) = delivery([Self.trigger("fav", port: receiver.listener.port)])
        defer { delivery.close() }
        let locations = ["a", "b", "c", "d", "e"]
        // All 40 writes are queued at once (the store commits them in the order queued), so
        // b's first event is committed whether or not this test's task runs again while
        // a's call is held: on a busy test run other tests may hold every thread of the
        // cooperative pool for longer than the hold.
        let committed = Mutex((count: 0, failed: false))
        for round in 0..<8 {
            for location in locations {
                database.write(.set(WriteEntry(path: Self.path("/users/\(location)/favorites/f"), value: .int(Int64(round)))),
                               as: Caller(auth: .null, isAdmin: true)) { result in
                    committed.withLock { state in
                        state.count += 1
                        if case .failure = result { state.failed = true }
                    }
                }
            }
        }
        try await waitUntil("every write committed") { committed.withLock { $0.count } == 40 }
        #expect(!committed.withLock { $0.failed })
        try await waitUntil("every event delivered") { receiver.count("users/") == 40 }
        #expect(hold.withLock { $0.overlapped }, "b's event arrived while a's was under way")
        let arrived = receiver.arrived
        for location in locations {
            #expect(arrived.filter { $0.hasPrefix("users/\(location)/") } == (0..<8).map { "users/\(location)/favorites/f=\($0)" })
        }
        #expect(receiver.most >= 2)
    }

    /// maxConcurrency 1: the whole trigger in commit order, one attempt at a time, under
    /// random receiver latency.
    @Test func maxConcurrencyOneKeepsTheTriggersCommitOrder() async throws {
        let receiver = try ByRef(status: { _ in 200 }, pause: { _ in Thread.sleep(forTimeInterval: Double(Int.random(in: 0...5)) / 1000) })
        defer { receiver.listener.stop() }
        var trigger = Self.trigger("fav", port: receiver.listener.port)
        trigger.maxConcurrency = 1
        let (delivery, database) = delivery([trigger])
        defer { delivery.close() }
        var expected: [String] = []
        for round in 0..<4 {
            for location in ["a", "b", "c", "d", "e"] {
                try await write(database, "/users/\(location)/favorites/f", .int(Int64(round)))
                expected.append("users/\(location)/favorites/f=\(round)")
            }
        }
        try await waitUntil("every event delivered") { receiver.count("users/") == 20 }
        #expect(receiver.arrived == expected)
        #expect(receiver.most == 1)
    }
}
