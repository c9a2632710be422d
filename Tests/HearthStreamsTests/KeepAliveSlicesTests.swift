import HearthJSON
import Testing
@testable import HearthStreams

/// Keep-alives spread over their interval: the slices from literals, and a round of ticks
/// on a hub reaching every live stream once, no tick reaching them all.
@Suite struct KeepAliveSlicesTests {
    @Test func theIntervalIsCutIntoTicksOfAboutASecond() {
        let cases: [(interval: Double, count: Int, tick: Double)] = [
            (30, 30, 1),  // the default: one slice a second
            (5, 5, 1),
            (2.7, 2, 1.35),  // whole ticks of at least a second
            (0.5, 1, 0.5),  // shorter than a tick: every stream at once, as one timer did
            (0.01, 1, 0.01),
            (Double(KeepAliveSlices.maxSlices), KeepAliveSlices.maxSlices, 1),
            (3600, KeepAliveSlices.maxSlices, 60),  // past the most slices: longer ticks
        ]
        for (interval, count, tick) in cases {
            let slices = KeepAliveSlices(interval: interval)
            #expect(slices.count == count && abs(slices.tick - tick) < 1e-9, "\(interval): \(slices)")
        }
    }

    @Test func aRoundOfTicksReachesEveryLiveStreamOnceAndNoTickReachesThemAll() throws {
        let hub = StreamHub(options: StreamOptions(), clock: { 0 })
        let slices = KeepAliveSlices(interval: 3)
        var sinks: [RecordingSink] = []
        for index in 0..<90 {
            let subscription = try hub.register(location: try DataPath(string: "s\(index)"), gate: TestGate(), address: "a")
            let sink = RecordingSink()
            hub.start(subscription, events: sink, initial: [], through: 0)
            sinks.append(sink)
        }
        var reachedPerTick: [Int] = []
        var before = 0
        for slice in 0..<slices.count {
            hub.sendKeepAlives(slice: slice, of: slices)
            hub.drain()
            let reached = sinks.filter { $0.text.contains("keep-alive") }.count
            reachedPerTick.append(reached - before)
            before = reached
        }
        #expect(sinks.allSatisfy { $0.text == "event: keep-alive\ndata: null\n\n" }, "every live stream exactly once")
        #expect(reachedPerTick.reduce(0, +) == 90 && reachedPerTick.allSatisfy { $0 < 90 }, "\(reachedPerTick)")
    }
}
