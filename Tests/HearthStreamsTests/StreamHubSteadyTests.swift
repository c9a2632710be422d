import HearthJSON
import HearthStreams
import Synchronization
import Testing

/// The hub's steady groups: a location whose listeners are all live gets its events
/// through one prepared broadcast, made once per change of its listeners; every change of
/// them (a join, a start, an end, an expiry, an older change) takes the per-listener path,
/// which prepares the sinks each event reaches for that event alone. The hub has one hook
/// for both paths, so `prepared` lists every preparation in order: a steady group's is
/// followed by no other for as long as it serves.
@Suite struct StreamHubSteadyTests {
    func path(_ text: String) -> DataPath { try! DataPath(string: text) }
    func put(_ seq: Int64, _ at: String) -> StreamChange { StreamChange(seq: seq, path: path(at), kind: .put, data: .int(seq)) }

    /// Counts the preparations (each one's number of sinks) and the events sent through
    /// prepared broadcasts.
    final class Preparations: Sendable {
        private let state = Mutex<(prepared: [Int], sent: Int)>(([], 0))
        var prepared: [Int] { state.withLock { $0.prepared } }
        var sent: Int { state.withLock { $0.sent } }
        func made(_ count: Int) { state.withLock { $0.prepared.append(count) } }
        func send() { state.withLock { $0.sent += 1 } }
    }

    struct CountingBroadcast: PreparedBroadcast {
        let sinks: [any StreamEventSink]
        let counts: Preparations
        func send(_ event: StreamEvent, seq: Int64) {
            counts.send()
            for sink in sinks { sink.deliver(event, seq: seq) }
        }
    }

    let counts = Preparations()
    let clock = StreamHubTests.Clock()

    func hub() -> StreamHub {
        let (counts, clock) = (counts, clock)
        return StreamHub(clock: { clock.withLock { $0 } }, prepareBroadcast: { sinks in
            counts.made(sinks.count)
            return CountingBroadcast(sinks: sinks, counts: counts)
        })
    }

    func live(_ hub: StreamHub, _ location: String, expiresAt: Int64? = nil, through seq: Int64 = 0) throws -> (Subscription, RecordingSink) {
        let subscription = try hub.register(location: path(location), gate: TestGate(expiresAt: expiresAt), address: "a", dependsOnData: false)
        let sink = RecordingSink()
        hub.start(subscription, events: sink, initial: [], through: seq)
        return (subscription, sink)
    }

    @Test func liveListenersOfOneLocationArePreparedOnceForManyEvents() throws {
        let hub = hub()
        let sinks = try (0..<50).map { _ in try live(hub, "rooms/a").1 }
        for seq in 1...20 { hub.publish([put(Int64(seq), "rooms/a/m\(seq)")]) { _ in true } }
        hub.drain()
        #expect(counts.prepared == [50])
        #expect(counts.sent == 20)
        for sink in sinks { #expect(sink.ids == Array(1...20)) }
        #expect(hub.eventsDelivered == 50 * 20)
    }

    @Test func aListenerWhoJoinsGetsOnlyWhatIsNewerThanItsSnapshotAndTheOthersMissNothing() throws {
        let hub = hub()
        let (_, first) = try live(hub, "rooms/a")
        hub.publish([put(1, "rooms/a/x"), put(2, "rooms/a/y")]) { _ in true }
        // Registered before change 3 committed; its snapshot is in sync with change 4,
        // whose publish reaches the hub only after the start.
        let joining = try hub.register(location: path("rooms/a"), gate: TestGate(), address: "b", dependsOnData: false)
        hub.publish([put(3, "rooms/a/z")]) { _ in true }
        let second = RecordingSink()
        hub.start(joining, events: second, initial: [], through: 4)
        hub.publish([put(4, "rooms/a/w"), put(5, "rooms/a/v")]) { _ in true }
        hub.publish([put(6, "rooms/a/u")]) { _ in true }
        hub.drain()
        #expect(first.ids == [1, 2, 3, 4, 5, 6])
        #expect(second.ids == [5, 6])
        // A group for the first listener (changes 1 and 2); the first alone for change 3
        // (the second not started) and change 4 (the second's snapshot has it already),
        // one event each; then a group for both once change 5 was newer than everything
        // either had (changes 5 and 6).
        #expect(counts.prepared == [1, 1, 1, 2])
        #expect(counts.sent == 6)
    }

    @Test func aRemovedListenerGetsNothingMoreAndTheRestKeepTheirEvents() throws {
        let hub = hub()
        let (gone, leaving) = try live(hub, "rooms/a")
        let (_, staying) = try live(hub, "rooms/a")
        hub.publish([put(1, "rooms/a/x")]) { _ in true }
        hub.drain()
        hub.remove(gone)
        hub.publish([put(2, "rooms/a/y"), put(3, "rooms/a/z")]) { _ in true }
        hub.drain()
        #expect(leaving.ids == [1])
        #expect(staying.ids == [1, 2, 3])
        #expect(counts.prepared == [2, 1])
    }

    @Test func anExpiredCredentialEndsItsListenerInsteadOfReceivingTheEvent() throws {
        let hub = hub()
        let (_, expiring) = try live(hub, "rooms/a", expiresAt: 2_000)
        let (_, lasting) = try live(hub, "rooms/a")
        hub.publish([put(1, "rooms/a/x")]) { _ in true }
        hub.drain()
        clock.withLock { $0 = 2_000 }
        hub.publish([put(2, "rooms/a/y")]) { _ in true }
        hub.drain()
        hub.publish([put(3, "rooms/a/z")]) { _ in true }
        hub.drain()
        #expect(expiring.ids == [1])
        #expect(expiring.finished)
        #expect(expiring.text.hasSuffix(String(decoding: StreamFrames.authRevoked, as: UTF8.self)))
        #expect(lasting.ids == [1, 2, 3])
        // The group of both (change 1); change 2, past the expiry, on the per-listener path
        // to the one left; then a group of that one (change 3).
        #expect(counts.prepared == [2, 1, 1])
    }

    @Test func aChangeNotNewerThanWhatTheGroupDeliveredIsNotSentAgain() throws {
        let hub = hub()
        let (_, sink) = try live(hub, "rooms/a")
        hub.publish([put(1, "rooms/a/x"), put(2, "rooms/a/y")]) { _ in true }
        hub.publish([put(2, "rooms/a/y"), put(3, "rooms/a/z")]) { _ in true }  // 2 again: a late duplicate
        hub.drain()
        #expect(sink.ids == [1, 2, 3])
    }

    @Test func listenersThatAreNotAllLiveTakeThePerListenerPath() throws {
        let hub = hub()
        let (_, live) = try live(hub, "rooms/a")
        // Registered, never started: its snapshot is still being read.
        let waiting = try hub.register(location: path("rooms/a"), gate: TestGate(), address: "b", dependsOnData: false)
        hub.publish([put(1, "rooms/a/x"), put(2, "rooms/a/y")]) { _ in true }
        hub.drain()
        #expect(live.ids == [1, 2])
        // No group: one preparation per event, of the one started listener.
        #expect(counts.prepared == [1, 1])
        let late = RecordingSink()
        hub.start(waiting, events: late, initial: [], through: 0)
        hub.publish([put(3, "rooms/a/z")]) { _ in true }
        hub.drain()
        #expect(late.ids == [1, 2, 3])  // the held changes, then the group's
        #expect(live.ids == [1, 2, 3])
        #expect(counts.prepared == [1, 1, 2])
    }

    @Test func eachLocationOfAChangeHasItsOwnGroup() throws {
        let hub = hub()
        let (_, room) = try live(hub, "rooms/a")
        let (_, message) = try live(hub, "rooms/a/m1")
        let (_, all) = try live(hub, "rooms")
        hub.publish([put(1, "rooms/a/m1")]) { _ in true }
        hub.publish([put(2, "rooms/a/m1")]) { _ in true }
        hub.drain()
        for sink in [room, message, all] { #expect(sink.ids == [1, 2]) }
        #expect(counts.prepared == [1, 1, 1])
        #expect(counts.sent == 6)
    }
}
