import HearthJSON
import HearthStreams
import Synchronization
import Testing

/// An SSE stream's listen: records the frames the SSE adapter (`SSEEventSink`) writes for
/// what the hub tells it.
final class RecordingSink: StreamEventSink {
    private let state = Mutex<(bytes: [UInt8], finished: Bool)>(([], false))
    func deliver(_ event: StreamEvent, seq: Int64) { state.withLock { $0.bytes += StreamFrames.event(event, id: seq) } }
    func ended(_ verdict: StreamVerdict) { state.withLock { $0.bytes += verdict.finalBytes; $0.finished = true } }
    func keepAlive() { state.withLock { $0.bytes += StreamFrames.keepAlive } }
    var text: String { state.withLock { String(decoding: $0.bytes, as: UTF8.self) } }
    var finished: Bool { state.withLock { $0.finished } }
    /// The `id:` of every data event received, in order.
    var ids: [Int64] {
        text.split(separator: "\n").compactMap { $0.hasPrefix("id: ") ? Int64($0.dropFirst(4)) : nil }
    }
}

/// A transport's listen (the wire protocol's), recording what the hub tells it.
final class RecordingEvents: StreamEventSink {
    private let state = Mutex<(delivered: Int, endings: [StreamVerdict])>((0, []))
    func deliver(_ event: StreamEvent, seq: Int64) { state.withLock { $0.delivered += 1 } }
    func ended(_ verdict: StreamVerdict) { state.withLock { $0.endings.append(verdict) } }
    func keepAlive() {}
    var delivered: Int { state.withLock { $0.delivered } }
    var endings: [StreamVerdict] { state.withLock { $0.endings } }
}

struct TestGate: StreamGate {
    var dependsOnData = false
    var expiresAt: Int64? = nil
    var tag = ""
}

@Suite struct StreamHubTests {
    func path(_ text: String) -> DataPath { try! DataPath(string: text) }
    func put(_ seq: Int64, _ at: String, _ value: JSONValue = .int(1)) -> StreamChange {
        StreamChange(seq: seq, path: path(at), kind: .put, data: value)
    }
    final class Clock: Sendable {
        let value = Mutex<Int64>(1_000)
        func withLock<T>(_ body: (inout Int64) -> T) -> T { value.withLock { body(&$0) } }
    }
    let now = Clock()
    /// A stream's initial snapshot, as `put /`.
    let snapshot = StreamEvent(name: .put, path: "/", data: .string("SNAPSHOT"))
    func hub(_ configure: (inout StreamOptions) -> Void = { _ in }) -> StreamHub {
        var options = StreamOptions()
        configure(&options)
        let now = self.now
        return StreamHub(options: options, clock: { now.withLock { $0 } })
    }

    func live(_ hub: StreamHub, _ location: String, gate: TestGate = TestGate(), address: String = "a", through seq: Int64 = 0) throws -> (Subscription, RecordingSink) {
        let subscription = try hub.register(location: path(location), gate: gate, address: address, dependsOnData: gate.dependsOnData)
        let sink = RecordingSink()
        hub.start(subscription, events: sink, initial: [], through: seq)
        return (subscription, sink)
    }

    @Test func aListenerHearsItsSubtreeOnly() throws {
        let hub = hub()
        let (_, a) = try live(hub, "users/a")
        let (_, b) = try live(hub, "users/b")
        hub.publish([put(1, "users/a/favorites/x"), put(2, "users/b/favorites/y"), put(3, "other")]) { _ in true }
        hub.drain()
        #expect(a.text == "event: put\nid: 1\ndata: {\"path\":\"/favorites/x\",\"data\":1}\n\n")
        #expect(b.ids == [2])
    }

    @Test func changesWaitForTheSnapshotAndOlderOnesAreDropped() throws {
        let hub = hub()
        let subscription = try hub.register(location: path("p"), gate: TestGate(), address: "a")
        hub.publish([put(4, "p/x"), put(5, "p/y"), put(6, "p/z")]) { _ in true }
        let sink = RecordingSink()
        hub.start(subscription, events: sink, initial: [(snapshot, 5)], through: 5)
        hub.publish([put(5, "p/y"), put(7, "p/w")]) { _ in true }  // 5 again: a late duplicate
        hub.drain()
        #expect(sink.text.hasPrefix("event: put\nid: 5\ndata: {\"path\":\"/\",\"data\":\"SNAPSHOT\"}\n\n"))
        #expect(sink.ids == [5, 6, 7])
    }

    @Test func eventsArriveInCommitOrder() throws {
        let hub = hub()
        let (_, sink) = try live(hub, "")
        for batch in 0..<50 {
            hub.publish((1...10).map { put(Int64(batch * 10 + $0), "k\($0)") }) { _ in true }
        }
        hub.drain()
        #expect(sink.ids == Array(1...500))
    }

    @Test func dataDependentAccessIsRecheckedBeforeDelivery() throws {
        let hub = hub()
        let (_, keeps) = try live(hub, "p", gate: TestGate(dependsOnData: true, tag: "keep"))
        let (_, loses) = try live(hub, "p", gate: TestGate(dependsOnData: true, tag: "lose"))
        let (_, fixed) = try live(hub, "p", gate: TestGate(dependsOnData: false, tag: "lose"))
        let asked = Mutex(0)
        hub.publish([put(1, "p/x")]) { subscription in
            asked.withLock { $0 += 1 }
            return (subscription.gate as! TestGate).tag == "keep"
        }
        hub.drain()
        #expect(asked.withLock { $0 } == 2)  // only the data-dependent ones
        #expect(keeps.ids == [1])
        #expect(loses.text == "event: cancel\ndata: null\n\n" && loses.finished)
        #expect(fixed.ids == [1])
        #expect(hub.openStreams == 2)
    }

    @Test func anExpiredCredentialGetsAuthRevokedAndNoEvent() throws {
        let hub = hub()
        let (_, sink) = try live(hub, "p", gate: TestGate(expiresAt: 2_000))
        hub.publish([put(1, "p/x")]) { _ in true }
        hub.drain()
        now.withLock { $0 = 2_000 }
        hub.publish([put(2, "p/y")]) { _ in true }
        hub.drain()
        #expect(sink.ids == [1])
        #expect(sink.text.hasSuffix("event: auth_revoked\ndata: credential is no longer valid\n\n") && sink.finished)
        #expect(hub.openStreams == 0)
    }

    @Test func theExpirySweepEndsIdleStreams() throws {
        let hub = hub()
        let (_, sink) = try live(hub, "p", gate: TestGate(expiresAt: 1_500))
        hub.sweepExpired()
        hub.drain()
        #expect(!sink.finished)
        now.withLock { $0 = 1_500 }
        hub.sweepExpired()
        hub.drain()
        #expect(sink.finished && sink.text == "event: auth_revoked\ndata: credential is no longer valid\n\n")
    }

    @Test func reviewEndsThoseWhoLostAccess() throws {
        let hub = hub()
        let (_, a) = try live(hub, "p", gate: TestGate(tag: "a"))
        let (_, b) = try live(hub, "q", gate: TestGate(tag: "b"))
        hub.review { ($0.gate as! TestGate).tag == "a" ? .cancel : .keep }
        hub.drain()
        #expect(a.finished && a.text == "event: cancel\ndata: null\n\n")
        #expect(!b.finished)
        #expect(hub.openStreams == 1)
    }

    /// A node that missed changes ends every stream without a last event (`reconnect`):
    /// an SSE stream is closed with nothing more, a transport's listen is told why.
    @Test func endAllClosesEveryStreamForAReconnect() throws {
        let hub = hub()
        let (_, a) = try live(hub, "p")
        let (_, b) = try live(hub, "q/r", through: 3)
        let events = RecordingEvents()
        let listen = try hub.register(location: path("p"), gate: TestGate(), address: "a")
        hub.start(listen, events: events, initial: [], through: 0)
        hub.endAll(.reconnect)
        hub.publish([put(4, "p/x")]) { _ in true }
        hub.drain()
        #expect(a.finished && a.text.isEmpty)
        #expect(b.finished && b.text.isEmpty)
        #expect(events.endings == [.reconnect] && events.delivered == 0)
        #expect(hub.openStreams == 0)
    }

    @Test func aStreamEndedBeforeItStartedGetsOnlyItsLastWord() throws {
        let hub = hub()
        let subscription = try hub.register(location: path("p"), gate: TestGate(), address: "a")
        hub.review { _ in .cancel }
        let sink = RecordingSink()
        hub.start(subscription, events: sink, initial: [(snapshot, 0)], through: 0)
        hub.drain()
        #expect(sink.finished && sink.text == "event: cancel\ndata: null\n\n")
    }

    @Test func theStreamCapsAreEnforced() throws {
        let hub = hub { $0.maxStreams = 3; $0.maxStreamsPerAddress = 2 }
        let first = try hub.register(location: .root, gate: TestGate(), address: "x")
        _ = try hub.register(location: .root, gate: TestGate(), address: "x")
        #expect(throws: StreamLimitError.tooManyStreamsFromAddress) {
            try hub.register(location: .root, gate: TestGate(), address: "x")
        }
        _ = try hub.register(location: .root, gate: TestGate(), address: "y")
        #expect(throws: StreamLimitError.tooManyStreams) {
            try hub.register(location: .root, gate: TestGate(), address: "z")
        }
        hub.remove(first)
        _ = try hub.register(location: .root, gate: TestGate(), address: "x")
        #expect(hub.openStreams == 3)
    }

    @Test func tooManyChangesWhileWaitingForTheSnapshotCancels() throws {
        let hub = hub { $0.maxPendingChanges = 3 }
        let subscription = try hub.register(location: .root, gate: TestGate(), address: "a")
        hub.publish((1...4).map { put(Int64($0), "k") }) { _ in true }
        let sink = RecordingSink()
        hub.start(subscription, events: sink, initial: [], through: 0)
        hub.drain()
        #expect(sink.finished && sink.text == "event: cancel\ndata: null\n\n")
    }

    @Test func keepAlivesGoToLiveStreams() throws {
        let hub = hub()
        let (_, sink) = try live(hub, "p")
        _ = try hub.register(location: path("q"), gate: TestGate(), address: "a")  // not started
        hub.sendKeepAlives()
        hub.drain()
        #expect(sink.text == "event: keep-alive\ndata: null\n\n")
    }

    @Test func theKeepAliveTimerFires() async throws {
        let hub = hub { $0.keepAliveInterval = 0.01 }
        let (_, sink) = try live(hub, "p")
        hub.startTimers()
        defer { hub.stop() }
        for await _ in AsyncTimerSequence.ticks(limit: 2_000) where sink.text.contains("keep-alive") { break }
        #expect(sink.text.hasPrefix("event: keep-alive\ndata: null\n\n"))
    }

    @Test func watchedLocationsListsSubscribersBelow() throws {
        let hub = hub()
        _ = try live(hub, "users/a/favorites")
        _ = try live(hub, "users/b")
        _ = try live(hub, "users")
        #expect(Set(hub.watchedLocations(below: path("users"), limit: 10) ?? []) == [path("users/a/favorites"), path("users/b")])
        #expect(hub.watchedLocations(below: path("users"), limit: 1) == nil)
        #expect(hub.watchedLocations(below: path("users/a/favorites"), limit: 10) == [])
        #expect(hub.watchedLocations(below: path("nobody"), limit: 10) == [])
    }

    @Test func removedSubscribersAreForgottenAndTheTriePruned() throws {
        let hub = hub()
        let (subscription, sink) = try live(hub, "a/b/c")
        hub.remove(subscription)
        hub.publish([put(1, "a/b/c")]) { _ in true }
        hub.drain()
        #expect(sink.text.isEmpty)
        #expect(hub.watchedLocations(below: .root, limit: 10) == [])
    }
}

/// Yields (with a short real pause) until the consumer breaks out or `limit` ticks pass:
/// waiting for a timer without asserting on elapsed time.
enum AsyncTimerSequence {
    static func ticks(limit: Int) -> AsyncStream<Int> {
        AsyncStream { continuation in
            let task = Task {
                for tick in 0..<limit {
                    try? await Task.sleep(nanoseconds: 1_000_000)
                    continuation.yield(tick)
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}

@Suite struct StreamHubDependenceTests {
    @Test func onlySubscribersMarkedDependentAreRechecked() throws {
        let hub = StreamHub(clock: { 0 })
        let subscription = try hub.register(location: .root, gate: TestGate(), address: "a")  // dependent until decided
        hub.start(subscription, events: RecordingSink(), initial: [], through: 0)
        let asked = Atomic<Int>(0)
        hub.publish([StreamChange(seq: 1, path: .root, kind: .put, data: .int(1))]) { _ in asked.add(1, ordering: .relaxed); return true }
        hub.setDependsOnData(subscription, false)
        hub.publish([StreamChange(seq: 2, path: .root, kind: .put, data: .int(2))]) { _ in asked.add(1, ordering: .relaxed); return true }
        hub.drain()
        #expect(asked.load(ordering: .relaxed) == 1)
    }
}
