import HearthJSON
import HearthStreams
import Synchronization
import Testing

/// A query stream without a limit: a change below its location re-reads only the children
/// it touched, with whether the client may have each in its window; a change at or above
/// the location, a query with a limit, or too many children re-read the whole result.
extension StreamHubTests {
    /// Re-reads that complete when the test says, as a reader's would later.
    final class ManualReads: Sendable {
        typealias ChildrenRead = (probes: [QueryChildProbe], done: @Sendable (QueryChildrenResult?) -> Void)
        let childReads = Mutex<[ChildrenRead]>([])
        let wholeReads = Mutex<[@Sendable (QueryResult?) -> Void]>([])

        var children: QueryChildrenRefresh {
            { probes, done in self.childReads.withLock { $0.append((probes, done)) } }
        }
        var whole: QueryRefresh {
            { done in self.wholeReads.withLock { $0.append(done) } }
        }
        var childReadCount: Int { childReads.withLock { $0.count } }
        var wholeReadCount: Int { wholeReads.withLock { $0.count } }
        /// Read `index`'s probes: key → may be in the window.
        func probes(_ index: Int) -> [String: Bool] {
            childReads.withLock { reads in
                Dictionary(uniqueKeysWithValues: reads[index].probes.map { ($0.key.string, $0.mayBeInWindow) })
            }
        }
        /// Completes child read `index`: each probed key in `inWindow` is in the window now.
        func completeChildren(_ index: Int, inWindow: Set<String> = [], event: StreamEvent? = nil, seq: Int64) {
            let read = childReads.withLock { $0[index] }
            read.done(QueryChildrenResult(event: event, inWindow: read.probes.map { inWindow.contains($0.key.string) }, seq: seq))
        }
        func failChildren(_ index: Int) {
            childReads.withLock { $0[index] }.done(nil)
        }
        func completeWhole(_ index: Int, _ result: QueryResult) {
            wholeReads.withLock { $0[index] }(result)
        }
    }

    func patch(_ seq: Int64, _ at: String, _ entries: [JSONKey: JSONValue]) -> StreamChange {
        StreamChange(seq: seq, path: path(at), kind: .patch, data: .object(entries))
    }

    func hashes(_ keys: String...) -> Set<Int> { Set(keys.map { JSONKey($0).hashValue }) }

    /// A live query stream at `q` without a limit, in sync with change 1, whose window holds
    /// `window`.
    func queryStream(_ hub: StreamHub, _ reads: ManualReads, window: Set<Int>? = []) throws -> (Subscription, RecordingSink) {
        let subscription = try hub.register(location: path("q"), gate: TestGate(), address: "a", refresh: reads.whole,
                                            rereadChildren: reads.children)
        let sink = RecordingSink()
        hub.start(subscription, events: sink, initial: [], through: 1, resultTag: [0], resultKeys: window)
        return (subscription, sink)
    }

    @Test func aChangeBelowTheLocationRereadsOnlyTheChildrenItTouched() throws {
        let (hub, reads) = (hub(), ManualReads())
        let (_, sink) = try queryStream(hub, reads, window: hashes("a"))
        hub.publish([put(2, "q/a/x"), patch(3, "q", ["b": 1, "c/d": 2])]) { _ in true }
        hub.drain()
        // One re-read at a time: the patch's children wait for the first.
        #expect(reads.childReadCount == 1)
        #expect(reads.probes(0) == ["a": true])
        reads.completeChildren(0, inWindow: ["a"], event: StreamEvent(name: .put, path: "/a", data: ["x": 1]), seq: 3)
        hub.drain()
        #expect(sink.ids == [3])
        #expect(reads.childReadCount == 2)
        #expect(reads.probes(1) == ["b": false, "c": false])
        // b entered the window, c did not; a change to each asks accordingly.
        reads.completeChildren(1, inWindow: ["b"], seq: 3)
        hub.drain()
        hub.publish([put(4, "q/b"), put(5, "q/c")]) { _ in true }
        hub.drain()
        #expect(reads.probes(2) == ["b": true])
        reads.completeChildren(2, seq: 5)  // b left
        hub.drain()
        #expect(reads.probes(3) == ["c": false])
        reads.completeChildren(3, seq: 5)
        hub.drain()
        hub.publish([put(6, "q/b")]) { _ in true }
        hub.drain()
        #expect(reads.probes(4) == ["b": false])
        #expect(reads.wholeReadCount == 0)
    }

    @Test func aChangeAtOrAboveTheLocationRereadsTheWholeResult() throws {
        let (hub, reads) = (hub(), ManualReads())
        let (_, sink) = try queryStream(hub, reads)
        hub.publish([put(2, "q", ["a": 1])]) { _ in true }
        hub.drain()
        #expect(reads.wholeReadCount == 1)
        reads.completeWhole(0, QueryResult(value: ["a": 1], tag: [1], seq: 2, childKeyHashes: hashes("a")))
        hub.drain()
        #expect(sink.ids == [2])
        hub.publish([put(3, "", ["q": ["b": 1]])]) { _ in true }
        hub.drain()
        #expect(reads.wholeReadCount == 2)
        reads.completeWhole(1, QueryResult(value: ["b": 1], tag: [2], seq: 3, childKeyHashes: hashes("b")))
        hub.drain()
        // A multi-path update above the location with entries inside it: those children.
        hub.publish([patch(4, "", ["q/a": 2, "q/b/x": 3, "elsewhere": 4])]) { _ in true }
        hub.drain()
        #expect(reads.probes(0) == ["a": false, "b": true], "the window the last whole result had")
        #expect(reads.wholeReadCount == 2)
    }

    @Test func moreChildrenThanOneRereadTakesAreRereadWhole() throws {
        let (hub, reads) = (hub { $0.maxQueryChildrenReread = 3 }, ManualReads())
        _ = try queryStream(hub, reads)
        hub.publish([patch(2, "q", ["a": 1, "b": 1, "c": 1])]) { _ in true }
        hub.drain()
        #expect(reads.probes(0).count == 3)
        reads.completeChildren(0, seq: 2)
        hub.drain()
        hub.publish([patch(3, "q", ["a": 1, "b": 1, "c": 1, "d": 1])]) { _ in true }
        hub.drain()
        #expect(reads.childReadCount == 1)
        #expect(reads.wholeReadCount == 1)
    }

    @Test func aQueryWithALimitIsRereadWholeForAnyChange() throws {
        let (hub, reads) = (hub(), ManualReads())
        let subscription = try hub.register(location: path("q"), gate: TestGate(), address: "a", refresh: reads.whole)
        hub.start(subscription, events: RecordingSink(), initial: [], through: 1, resultTag: [0])
        hub.publish([put(2, "q/a")]) { _ in true }
        hub.drain()
        #expect(reads.wholeReadCount == 1)
        #expect(reads.childReadCount == 0)
    }

    @Test func changesTheFirstResultCoversAreNotReread() throws {
        let (hub, reads) = (hub(), ManualReads())
        let subscription = try hub.register(location: path("q"), gate: TestGate(), address: "a", refresh: reads.whole,
                                            rereadChildren: reads.children)
        hub.publish([put(3, "q/a"), put(6, "q/b")]) { _ in true }
        hub.start(subscription, events: RecordingSink(), initial: [], through: 5, resultTag: [0], resultKeys: [])
        hub.drain()
        #expect(reads.childReadCount == 1)
        #expect(reads.probes(0) == ["b": false])

        let other = try hub.register(location: path("q"), gate: TestGate(), address: "a", refresh: reads.whole,
                                     rereadChildren: reads.children)
        hub.publish([put(4, "q", ["a": 1])]) { _ in true }
        hub.start(other, events: RecordingSink(), initial: [], through: 5, resultTag: [0], resultKeys: [])
        hub.drain()
        #expect(reads.wholeReadCount == 0)
        #expect(reads.childReadCount == 1)
    }

    /// A child re-read is in sync with its seq for its own children only: a change to
    /// another child with an older seq (a change another node made, heard late) is still
    /// re-read. A whole re-read would have covered it. (The read waits until the changes
    /// up to its seq have reached the hub, here with change 10 elsewhere.)
    @Test func aChildRereadLeavesOlderChangesToOtherChildrenOwed() throws {
        let (hub, reads) = (hub(), ManualReads())
        _ = try queryStream(hub, reads)
        hub.publish([put(2, "q/a")]) { _ in true }
        hub.drain()
        reads.completeChildren(0, seq: 10)
        hub.drain()
        hub.publish([put(8, "q/b")]) { _ in true }
        hub.publish([put(10, "elsewhere")]) { _ in true }
        hub.drain()
        #expect(reads.childReadCount == 2)
        #expect(reads.probes(1) == ["b": false])
    }

    @Test func aFailedChildRereadRereadsTheWholeResultOnTheNextChange() throws {
        let (hub, reads) = (hub(), ManualReads())
        _ = try queryStream(hub, reads)
        hub.publish([put(2, "q/a")]) { _ in true }
        hub.drain()
        reads.failChildren(0)
        hub.drain()
        #expect(reads.wholeReadCount == 0, "no retry without a change")
        hub.publish([put(3, "q/b")]) { _ in true }
        hub.drain()
        #expect(reads.wholeReadCount == 1)
        #expect(reads.childReadCount == 1)
    }

    @Test func pastTheTrackedBoundEveryChildMayBeInTheWindow() throws {
        let (hub, reads) = (hub { $0.maxTrackedWindowKeys = 2 }, ManualReads())
        _ = try queryStream(hub, reads, window: hashes("a"))
        hub.publish([put(2, "q/b")]) { _ in true }
        hub.drain()
        reads.completeChildren(0, inWindow: ["b"], seq: 2)
        hub.drain()
        hub.publish([put(3, "q/c")]) { _ in true }
        hub.drain()
        #expect(reads.probes(1) == ["c": false], "two keys tracked")
        reads.completeChildren(1, inWindow: ["c"], seq: 3)  // the third: no longer tracked
        hub.drain()
        hub.publish([put(4, "q/z")]) { _ in true }
        hub.drain()
        #expect(reads.probes(2) == ["z": true])

        // A first result with too many keys to track comes without them.
        let (hub2, reads2) = (self.hub(), ManualReads())
        _ = try queryStream(hub2, reads2, window: nil)
        hub2.publish([put(2, "q/z")]) { _ in true }
        hub2.drain()
        #expect(reads2.probes(0) == ["z": true])
    }
}
