import HearthJSON
import HearthStreams
import Testing

/// A query stream's children re-read shows its children as of its read, which can be newer
/// than the changes the hub has handled: its event goes out only when it shows a state the
/// data really had, so a client never sees a later write to one child before an earlier
/// write to another.
extension StreamHubTests {
    /// Change 3 touched b and change 4 touched a again while a's read (for change 2) ran,
    /// and the read saw both. Sending a's state as of 4 without b's of 3 would show change 4
    /// before change 3: a and b are read again together, and only that read is sent.
    @Test func aReadNewerThanAChangeToAnotherChildIsReadAgainWithIt() throws {
        let (hub, reads) = (hub(), ManualReads())
        let (_, sink) = try queryStream(hub, reads, window: hashes("a", "b"))
        hub.publish([put(2, "q/a")]) { _ in true }
        hub.drain()
        hub.publish([put(3, "q/b"), put(4, "q/a")]) { _ in true }
        hub.drain()
        #expect(reads.childReadCount == 1)
        reads.completeChildren(0, inWindow: ["a"], event: StreamEvent(name: .put, path: "/a", data: 4), seq: 4)
        hub.drain()
        #expect(sink.ids == [], "a's state at 4 without b's at 3")
        #expect(reads.childReadCount == 2)
        #expect(reads.probes(1) == ["a": true, "b": true])
        reads.completeChildren(1, inWindow: ["a", "b"], event: StreamEvent(name: .patch, path: "/", data: ["a": 4, "b": 3]), seq: 4)
        hub.drain()
        #expect(sink.ids == [4])
        #expect(reads.childReadCount == 2)
    }

    /// A read older than every change to other children it did not read is sent: its
    /// children did not change after them, so it shows the state just before them.
    @Test func aReadOlderThanTheChangesToOtherChildrenIsSent() throws {
        let (hub, reads) = (hub(), ManualReads())
        let (_, sink) = try queryStream(hub, reads, window: hashes("a", "b"))
        hub.publish([put(2, "q/a")]) { _ in true }
        hub.drain()
        hub.publish([put(3, "q/b")]) { _ in true }
        hub.drain()
        reads.completeChildren(0, inWindow: ["a"], event: StreamEvent(name: .put, path: "/a", data: 2), seq: 3)
        hub.drain()
        #expect(sink.ids == [3])
        #expect(reads.probes(1) == ["b": true])
    }

    /// A read that saw changes the hub has not been handed yet waits for them. a's read
    /// came back at 4; change 3 touched b and change 4 touched a again: once both arrive,
    /// the read shows a as of 4 beside b before 3, so both are read again. Changes it
    /// waited for that touched nothing else let it go out as it was.
    @Test func aReadAheadOfTheHubWaitsForTheChangesItSaw() throws {
        let (hub, reads) = (hub(), ManualReads())
        let (_, sink) = try queryStream(hub, reads, window: hashes("a", "b"))
        hub.publish([put(2, "q/a")]) { _ in true }
        hub.drain()
        reads.completeChildren(0, inWindow: ["a"], event: StreamEvent(name: .put, path: "/a", data: 4), seq: 4)
        hub.drain()
        #expect(sink.ids == [], "changes 3 and 4 not handed to the hub yet")
        #expect(reads.childReadCount == 1)
        hub.publish([put(3, "q/b")]) { _ in true }
        hub.drain()
        #expect(sink.ids == [], "change 4 still missing")
        hub.publish([put(4, "q/a")]) { _ in true }
        hub.drain()
        #expect(sink.ids == [])
        #expect(reads.probes(1) == ["a": true, "b": true])

        let (hub2, reads2) = (self.hub(), ManualReads())
        let (_, sink2) = try queryStream(hub2, reads2, window: hashes("a"))
        hub2.publish([put(2, "q/a")]) { _ in true }
        hub2.drain()
        reads2.completeChildren(0, inWindow: ["a"], event: StreamEvent(name: .put, path: "/a", data: 2), seq: 3)
        hub2.drain()
        #expect(sink2.ids == [])
        hub2.publish([put(3, "elsewhere")]) { _ in true }
        hub2.drain()
        #expect(sink2.ids == [3])
        #expect(reads2.childReadCount == 1)
    }
}
