import Dispatch
import HearthJSON
import HearthStreams
import Synchronization
import Testing

/// A stream's first events are prepared by its sink on the queue that starts the stream,
/// and a query stream's new result on the reader that read it, not on the fan-out queue:
/// a snapshot of megabytes being encoded holds no other stream's pushes, and the stream's
/// own later events still follow it.
extension StreamHubTests {
    /// A sink whose first events take as long to prepare as the test says: `prepareEvents`
    /// waits for `gate`, then records the events as `RecordingSink` would.
    final class SlowToPrepare: StreamEventSink {
        let recording = RecordingSink()
        let gate = DispatchSemaphore(value: 0)
        let preparing = DispatchSemaphore(value: 0)
        let sent = DispatchSemaphore(value: 0)
        func deliver(_ event: StreamEvent, seq: Int64) { recording.deliver(event, seq: seq) }
        func ended(_ verdict: StreamVerdict) { recording.ended(verdict) }
        func prepareEvents(_ initial: [(event: StreamEvent, seq: Int64)]) -> PreparedEvents {
            preparing.signal()
            gate.wait()
            return PreparedEvents { [recording, sent] in
                for (event, seq) in initial { recording.deliver(event, seq: seq) }
                sent.signal()
            }
        }
    }

    /// Whether everything queued on the hub's fan-out queue ran within 30 s (a failing
    /// test fails rather than hangs).
    func drains(_ hub: StreamHub) -> Bool {
        let drained = DispatchGroup()
        drained.enter()
        DispatchQueue.global().async {
            hub.drain()
            drained.leave()
        }
        return drained.wait(timeout: .now() + 30) == .success
    }

    @Test func preparingASnapshotHoldsNoOtherStreamsPushes() throws {
        let hub = hub()
        let (_, other) = try live(hub, "tick")
        let starting = try hub.register(location: path("big"), gate: TestGate(), address: "b")
        let sink = SlowToPrepare()
        let started = DispatchGroup()
        started.enter()
        DispatchQueue.global().async {
            hub.start(starting, events: sink, initial: [(self.snapshot, 1)], through: 1)
            started.leave()
        }
        sink.preparing.wait()
        // The snapshot is being prepared: the fan-out queue still delivers other pushes,
        // and holds the starting stream's own.
        hub.publish([put(2, "tick"), put(3, "big/x")]) { _ in true }
        #expect(drains(hub), "the fan-out queue was not held")
        #expect(other.ids == [2])
        #expect(sink.recording.ids.isEmpty)
        sink.gate.signal()
        #expect(started.wait(timeout: .now() + 30) == .success)
        hub.drain()
        #expect(sink.recording.ids == [1, 3], "the snapshot first, then what came while it was prepared")
    }

    @Test func theDefaultDeliversTheFirstEventsOnTheFanOutQueueInOrder() throws {
        let hub = hub()
        let subscription = try hub.register(location: path("p"), gate: TestGate(), address: "a")
        hub.publish([put(6, "p/z")]) { _ in true }
        let sink = RecordingSink()
        let replay = [(StreamEvent(name: .put, path: "/x", data: 1), Int64(4)), (StreamEvent(name: .put, path: "/y", data: 1), Int64(5))]
        hub.start(subscription, events: sink, initial: replay, through: 5)
        hub.drain()
        #expect(sink.ids == [4, 5, 6])
    }

    @Test func preparingAQueryStreamsNewResultHoldsNoOtherStreamsPushes() throws {
        let hub = hub()
        let (_, other) = try live(hub, "tick")
        // The query's re-read completes on another queue, as a reader's does.
        let refresh: QueryRefresh = { done in
            DispatchQueue.global().async { done(QueryResult(value: .string("NEW"), tag: [1], seq: 2)) }
        }
        let query = try hub.register(location: path("big"), gate: TestGate(), address: "b", refresh: refresh)
        let sink = SlowToPrepare()
        hub.start(query, events: sink, initial: PreparedEvents {}, through: 1, resultTag: [0])
        hub.publish([put(2, "big/x"), put(3, "tick")]) { _ in true }
        sink.preparing.wait()
        #expect(drains(hub), "the fan-out queue was not held")
        #expect(other.ids == [3])
        sink.gate.signal()
        #expect(sink.sent.wait(timeout: .now() + 30) == .success)
        #expect(sink.recording.ids == [2])
        #expect(sink.recording.text.contains("NEW"))
    }
}
