import HearthServer
import HearthStreams
import HearthTesting
import Testing

/// A resume replays the missed changes only while their stored data at the location is
/// within `StreamOptions.maxReplayBytes`; past it the client gets a fresh snapshot, whose
/// size is the location's, not the sum of every large value written there since.
@Suite struct StreamReplayBudgetLiveTests {
    /// With a budget of 64 bytes: three small changes (18 bytes) are replayed; one more of
    /// 100 characters passes the budget, and the same resume gets `put /` instead.
    @Test func aReplayPastItsByteBudgetBecomesASnapshot() async throws {
        let server = try LiveServer { $0.streams.maxReplayBytes = 64 }
        let first = try server.stream("/list.json")
        let snapshot = try first.nextEvent()
        first.close()
        for value in 1...3 { _ = try server.request("PUT", "/list/k\(value).json", "\(value)") }
        let replayed = try server.stream("/list.json", headers: [("Last-Event-ID", "\(snapshot.id!)")])
        var events: [ReceivedEvent] = []
        for _ in 0..<3 { events.append(try replayed.nextEvent()) }
        #expect(events.map(\.data) == [#"{"path":"/k1","data":1}"#, #"{"path":"/k2","data":2}"#, #"{"path":"/k3","data":3}"#])
        replayed.close()
        let long = String(repeating: "x", count: 100)
        _ = try server.request("PUT", "/list/k4.json", "\"\(long)\"")
        let resumed = try server.stream("/list.json", headers: [("Last-Event-ID", "\(snapshot.id!)")])
        #expect(try resumed.nextEvent() == ReceivedEvent(
            name: "put", id: snapshot.id! + 4, data: #"{"path":"/","data":{"k1":1,"k2":2,"k3":3,"k4":""# + long + #""}}"#))
        // Changes elsewhere count for nothing: a resume after the long one replays again.
        _ = try server.request("PUT", "/elsewhere.json", "\"\(long)\(long)\"")
        _ = try server.request("PUT", "/list/k5.json", "5")
        let after = try server.stream("/list.json", headers: [("Last-Event-ID", "\(snapshot.id! + 4)")])
        #expect(try after.nextEvent() == ReceivedEvent(name: "put", id: snapshot.id! + 6, data: #"{"path":"/k5","data":5}"#))
        await server.stop()
    }

    /// The default, 1 MiB: one missed change of 600,000 characters is replayed, two are a
    /// snapshot.
    @Test func theDefaultBudgetIsOneMebibyte() async throws {
        #expect(StreamOptions.defaultMaxReplayBytes == 1 << 20)
        let server = try LiveServer()
        let first = try server.stream("/big.json")
        let snapshot = try first.nextEvent()
        first.close()
        let value = String(repeating: "v", count: 600_000)
        _ = try server.request("PUT", "/big/a.json", "\"\(value)\"")
        let one = try server.stream("/big.json", headers: [("Last-Event-ID", "\(snapshot.id!)")])
        let replayed = try one.nextEvent()
        let isTheChange = replayed.name == "put" && replayed.data == #"{"path":"/a","data":""# + value + #""}"#
        #expect(isTheChange, "\(replayed.name) \(replayed.data.prefix(40))…")  // not the whole 600 KB
        one.close()
        _ = try server.request("PUT", "/big/b.json", "\"\(value)\"")
        let two = try server.stream("/big.json", headers: [("Last-Event-ID", "\(snapshot.id!)")])
        let fresh = try two.nextEvent()
        let isTheSnapshot = fresh.name == "put" && fresh.id == snapshot.id! + 2
            && fresh.data == #"{"path":"/","data":{"a":""# + value + #"","b":""# + value + #""}}"#
        #expect(isTheSnapshot, "\(fresh.name) \(String(describing: fresh.id)) \(fresh.data.prefix(40))…")
        await server.stop()
    }
}
