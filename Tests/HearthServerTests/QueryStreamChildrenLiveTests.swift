import HearthJSON
import HearthServer
import HearthTesting
import Testing

/// Query streams without a limit against a real server: a change re-reads only the
/// children it touched, and the client's view, built from the events it got, stays equal
/// to the query's result through random writes at, below and above the location.
@Suite struct QueryStreamChildrenLiveTests {
    static let rules = #"{"rules": {".read": true, ".write": true, "items": {".indexOn": ["v"]}}}"#
    static let keys = (0..<10).map { "c\($0)" }
    /// Each query's window holds `c5` with `v` 5: each round ends by writing it, so its
    /// event tells that the round's changes reached the stream.
    static let queries = [
        #"orderBy=%22v%22&startAt=3&endAt=7"#,
        #"orderBy=%22$key%22&startAt=%22c3%22&endAt=%22c7%22"#,
        #"orderBy=%22v%22&startAt=5"#,
    ]

    /// `value` with `new` at `path` (`null` deletes; an object left empty goes too).
    static func setting(_ value: JSONValue, at path: ArraySlice<String>, to new: JSONValue) -> JSONValue {
        guard let first = path.first else { return new }
        var members = value.objectValue ?? [:]
        let child = setting(members[JSONKey(first)] ?? .null, at: path.dropFirst(), to: new)
        members[JSONKey(first)] = child == .null ? nil : child
        return members.isEmpty ? .null : .object(members)
    }

    /// The client's view after `event`, as a Firebase client applies it.
    static func applying(_ event: ReceivedEvent, to view: JSONValue) throws -> JSONValue {
        let body = try JSONParser.parse(Array(event.data.utf8))
        let path = (body.objectValue?["path"]?.stringValue ?? "/").split(separator: "/").map(String.init)
        let data = body.objectValue?["data"] ?? .null
        switch event.name {
        case "put": return setting(view, at: path[...], to: data)
        case "patch":
            var view = view
            for (key, value) in data.objectValue ?? [:] {
                view = setting(view, at: (path + key.string.split(separator: "/").map(String.init))[...], to: value)
            }
            return view
        default: throw LiveClientError("unexpected event \(event)")
        }
    }

    /// A random write at, below or above `/items`.
    static func randomWrite(_ server: LiveServer, _ random: inout SplitMix64) throws {
        func key() -> String { keys.randomElement(using: &random)! }
        func item() -> String { #"{"v":\#(Int.random(in: 0...10, using: &random)),"n":"\#(Int.random(in: 0...99, using: &random))"}"# }
        let answer: (status: Int, body: String)
        switch Int.random(in: 0..<20, using: &random) {
        case 0..<7: answer = try server.request("PUT", "/items/\(key()).json", item())
        case 7..<10: answer = try server.request("PUT", "/items/\(key())/v.json", "\(Int.random(in: 0...10, using: &random))")
        case 10..<13: answer = try server.request("DELETE", "/items/\(key()).json")
        case 13..<16:
            let (a, b) = (key(), key())
            let entry = a == b ? "" : #","\#(b)/v":\#(Int.random(in: 0...10, using: &random))"#
            answer = try server.request("PATCH", "/items.json", #"{"\#(a)":\#(Bool.random(using: &random) ? "null" : item())\#(entry)}"#)
        case 16: answer = try server.request("PUT", "/items.json", #"{"\#(key())":\#(item()),"c5":\#(item())}"#)
        case 17: answer = try server.request("PATCH", "/.json", #"{"items/\#(key())":\#(item()),"other":1}"#)
        case 18: answer = try server.request("PUT", "/items/\(key())/n.json", #""note""#)
        default: answer = try server.request("PUT", "/other.json", "\(Int.random(in: 0...9, using: &random))")
        }
        #expect(answer.status == 200, "\(answer.body)")
    }

    func viewsFollowTheResults(configure: @escaping (inout HearthConfiguration) -> Void = { _ in }) async throws {
        let server = try LiveServer(rules: Self.rules, configure: configure)
        var items: [String] = []
        for (index, key) in Self.keys.enumerated() { items.append(#""\#(key)":{"v":\#(index),"n":"x"}"#) }
        _ = try server.request("PUT", "/items.json", "{" + items.joined(separator: ",") + "}")
        let streams = try Self.queries.map { try server.stream("/items.json?" + $0) }
        var views = try streams.map { try Self.applying($0.nextEvent(), to: .null) }
        var random = SplitMix64(seed: 45)
        for round in 0..<40 {
            for _ in 0..<4 { try Self.randomWrite(server, &random) }
            let mark = "mark-\(round)"
            _ = try server.request("PUT", "/items/c5.json", #"{"v":5,"n":"\#(mark)"}"#)
            for (index, stream) in streams.enumerated() {
                while true {
                    let event = try stream.nextEvent()
                    views[index] = try Self.applying(event, to: views[index])
                    if event.data.contains(mark) { break }
                }
                let result = try server.request("GET", "/items.json?" + Self.queries[index])
                let expected = try JSONParser.parse(Array(result.body.utf8))
                #expect(views[index] == expected, "round \(round), query \(Self.queries[index])")
            }
        }
        await server.stop()
    }

    @Test func theClientsViewFollowsTheResultThroughRandomWrites() async throws {
        try await viewsFollowTheResults()
    }

    /// With no window keys remembered, a child that is not in the window gets a `null`
    /// whenever a change touches it: the views still follow the results.
    @Test func withoutTrackedKeysTheViewsStillFollowTheResults() async throws {
        try await viewsFollowTheResults { $0.streams.maxTrackedWindowKeys = 0 }
    }

    @Test func aChangeToOneChildSendsThatChildOnly() async throws {
        let server = try LiveServer(rules: Self.rules)
        _ = try server.request("PUT", "/items.json", #"{"a":{"v":1},"b":{"v":4},"c":{"v":9}}"#)
        let stream = try server.stream("/items.json?" + Self.queries[0])
        #expect(try stream.nextEvent().data == #"{"path":"/","data":{"b":{"v":4}}}"#)
        _ = try server.request("PUT", "/items/c/v.json", "5")  // enters
        #expect(try stream.nextEvent().data == #"{"path":"/c","data":{"v":5}}"#)
        _ = try server.request("PUT", "/items/a/n.json", "1")  // stays out: no event
        _ = try server.request("PATCH", "/items.json", #"{"b":null,"d":{"v":6},"e":{"v":0}}"#)  // b leaves, d enters
        let patch = try stream.nextEvent()
        #expect(patch.name == "patch")
        #expect(try JSONParser.parse(Array(patch.data.utf8)) == JSONParser.parse(Array(#"{"path":"/","data":{"b":null,"d":{"v":6}}}"#.utf8)))
        _ = try server.request("PUT", "/items.json", #"{"x":{"v":3}}"#)  // the location: the whole result
        #expect(try stream.nextEvent().data == #"{"path":"/","data":{"x":{"v":3}}}"#)
        await server.stop()
    }

    /// Over the wire protocol the same re-read reaches a tagged query listen as a `d` at
    /// the child's path, with the tag.
    @Test func aWireQueryListenGetsTheChildWithItsTag() async throws {
        let server = try LiveServer(rules: Self.rules)
        _ = try server.request("PUT", "/items.json", #"{"a":{"v":1},"b":{"v":4}}"#)
        let client = try WireTestClient(port: server.port)
        let query: JSONValue = ["i": "v", "sp": 3, "ep": 7]
        let answer = try client.request("q", ["p": "/items", "q": query, "t": 7, "h": ""])
        #expect(answer.objectValue?["s"] == "ok")
        #expect(client.pushes == [["p": "/items", "d": ["b": ["v": 4]], "t": 7]])
        _ = try server.request("PUT", "/items/a/v.json", "5")
        try client.waitForPushes(2)
        #expect(client.pushes.last == ["p": "/items/a", "d": ["v": 5], "t": 7])
        _ = try server.request("PUT", "/items/b/v.json", "9")
        try client.waitForPushes(3)
        #expect(client.pushes.last == ["p": "/items/b", "d": .null, "t": 7])
        await server.stop()
    }
}
