import HearthDatabase
import HearthHTTPClient
import HearthJSON
import HearthStore
import HearthTesting
import Synchronization
import Testing
@testable import HearthTriggers

/// A trigger's deliveries share their connections to the receiver: a keep-alive receiver
/// sees a few connections for many events, and one that closes each connection after its
/// answer still gets every event once. Real SQLite outbox, real listeners on port 0.
@Suite struct TriggerConnectionReuseTests {
    /// Counts connections and the requests read; answers 200 on each connection until the
    /// client closes it, or after one request when `oneEach`.
    final class Receiver: Sendable {
        final class Tally: Sendable {
            let connections = Mutex(0)
            /// Connections ended: the client closed them (or, `oneEach`, the receiver did).
            let closed = Mutex(0)
            let requests = Mutex<[ReceivedRequest]>([])
        }
        let tally = Tally()
        let listener: LoopbackListener

        init(oneEach: Bool) throws {
            let tally = self.tally
            listener = try LoopbackListener { socket in
                tally.connections.withLock { $0 += 1 }
                defer { tally.closed.withLock { $0 += 1 } }
                while let request = socket.readRequest() {
                    tally.requests.withLock { $0.append(request) }
                    guard (try? socket.respond(200)) != nil, !oneEach else { return }
                }
            }
        }

        var accepted: Int { tally.connections.withLock { $0 } }
        var closed: Int { tally.closed.withLock { $0 } }
        var received: [ReceivedRequest] { tally.requests.withLock { $0 } }
    }

    let base: TriggerDeliveryTests

    init() throws { base = try TriggerDeliveryTests() }

    /// 40 events from one commit (40 locations), delivered at `maxConcurrency`; then, with
    /// the trigger still running, every connection it kept is closed once idle (a second,
    /// found by the deliverer's next pass, at most its 2 s idle poll later).
    func deliverForty(to receiver: Receiver, maxConcurrency: Int) async throws {
        var trigger = TriggerDeliveryTests.trigger("fav", port: receiver.listener.port)
        trigger.maxConcurrency = maxConcurrency
        let (delivery, database) = base.delivery([trigger])
        defer { delivery.close() }
        let entries = (0..<40).map { WriteEntry(path: TriggerDeliveryTests.path("/users/u1/favorites/f\($0)"), value: .int(Int64($0))) }
        _ = try await withCheckedContinuation { continuation in
            database.write(.update(base: TriggerDeliveryTests.path("/users"), entries: entries), as: Caller(auth: .null, isAdmin: true)) {
                continuation.resume(returning: $0)
            }
        }.get()
        try await waitUntil("40 delivered", showing: "\(receiver.received.count)") {
            try base.store.triggerOutbox.pendingCount(trigger: "fav") == 0
        }
        let ids = receiver.received.compactMap { $0.header("ce-id") }
        #expect(ids.count == 40 && Set(ids).count == 40)
        #expect(delivery.status().first?.status.delivered == 40)
        #expect(delivery.status().first?.status.failedAttempts == 0)
        try await waitUntil("every kept connection closed", showing: "\(receiver.closed) of \(receiver.accepted)") {
            receiver.closed == receiver.accepted
        }
    }

    /// Without the pool each event opened its own connection: 40 here. With it, the
    /// attempts reuse them: one at a time needs one connection, eight at once eight. The
    /// bound leaves room for a pause longer than the pool's idle second between two
    /// attempts on a loaded machine (the connection is then closed and another opened).
    @Test(arguments: [1, 8])
    func aKeepAliveReceiverSeesFewConnectionsForManyEvents(maxConcurrency: Int) async throws {
        let receiver = try Receiver(oneEach: false)
        defer { receiver.listener.stop() }
        try await deliverForty(to: receiver, maxConcurrency: maxConcurrency)
        #expect(receiver.accepted <= maxConcurrency + 3, "\(receiver.accepted) connections for 40 events")
        #expect(receiver.received.allSatisfy { $0.header("connection") == nil })
    }

    /// A receiver that closes every connection after one answer: each kept connection is
    /// found closed (while idle, or as the next event is sent, which is then sent on a new
    /// one). Every event arrives once and no attempt is counted as failed.
    @Test(arguments: [1, 8])
    func aReceiverClosingEachConnectionGetsEveryEventOnce(maxConcurrency: Int) async throws {
        let receiver = try Receiver(oneEach: true)
        defer { receiver.listener.stop() }
        try await deliverForty(to: receiver, maxConcurrency: maxConcurrency)
        #expect(receiver.accepted == 40)
    }
}
