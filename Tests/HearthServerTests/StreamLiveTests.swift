import Dispatch
import HearthJSON
import HearthServer
import HearthTesting
import Synchronization
import Testing

/// Live streams against a real server on 127.0.0.1 port 0 (docs/protocol/streaming.md §2,
/// docs/design.md §5).
@Suite struct StreamLiveTests {
    func json(_ text: String) -> JSONValue { try! JSONParser.parse(Array(text.utf8)) }

    @Test func headersFirstEventAndLaterEventsHaveExactBytes() async throws {
        let server = try LiveServer()
        _ = try server.request("PUT", "/users.json", #"{"a":{"x":1},"b":{"y":2}}"#)
        let stream = try server.stream("/users/a.json")
        let head = try stream.readHead()
        #expect(head.status == 200)
        #expect(head.header("Content-Type") == "text/event-stream; charset=utf-8")
        #expect(head.header("Cache-Control") == "no-cache")
        #expect(head.header("X-Accel-Buffering") == "no")
        #expect(head.header("Access-Control-Allow-Origin") == "*")
        #expect(head.header("Content-Length") == nil)
        _ = try stream.nextEvent()
        #expect(stream.rawEvents.last == "event: put\nid: 1\ndata: {\"path\":\"/\",\"data\":{\"x\":1}}\n\n")

        _ = try server.request("PUT", "/users/a/favorites/x.json", #"{"name":"Berlin","note":"hi"}"#)
        _ = try server.request("PUT", "/users/b/favorites/y.json", #"{"name":"Paris"}"#)  // not under /users/a
        _ = try server.request("PATCH", "/users/a/favorites/x.json", #"{"note":null,"n":2}"#)
        _ = try server.request("DELETE", "/users/a/x.json")
        _ = try server.request("PATCH", "/users.json", #"{"a/favorites/z":true,"b/q":1}"#)
        var raw: [String] = []
        for _ in 0..<4 {
            _ = try stream.nextEvent()
            raw.append(stream.rawEvents.last!)
        }
        #expect(raw == [
            "event: put\nid: 2\ndata: {\"path\":\"/favorites/x\",\"data\":{\"name\":\"Berlin\",\"note\":\"hi\"}}\n\n",
            "event: patch\nid: 4\ndata: {\"path\":\"/favorites/x\",\"data\":{\"n\":2,\"note\":null}}\n\n",
            "event: put\nid: 5\ndata: {\"path\":\"/x\",\"data\":null}\n\n",
            "event: patch\nid: 6\ndata: {\"path\":\"/\",\"data\":{\"favorites/z\":true}}\n\n",
        ])
        await server.stop()
    }

    @Test func aDeniedStreamGets401AndNoStream() async throws {
        let server = try LiveServer(rules: #"{"rules": {"open": {".read": true}}}"#)
        let stream = try server.stream("/secret.json")
        #expect(try stream.readHead().status == 401)
        #expect(try stream.readErrorBody() == #"{"error":"Permission denied"}"#)
        let allowed = try server.stream("/open.json")
        #expect(try allowed.readHead().status == 200)
        #expect(try allowed.nextEvent() == ReceivedEvent(name: "put", id: 0, data: #"{"path":"/","data":null}"#))
        await server.stop()
    }

    @Test func ownerOnlyRulesWithTokensInHeaderOrQuery() async throws {
        let server = try LiveServer(rules: ReferenceRules.text)
        let alice = try server.anonymousUser()
        let bob = try server.anonymousUser()
        let ok = try server.stream("/users/\(alice.uid)/favorites.json?auth=\(alice.token)")
        #expect(try ok.readHead().status == 200)
        #expect(try ok.nextEvent().name == "put")
        let viaHeader = try server.stream("/users/\(alice.uid)/favorites.json", headers: [("Authorization", "Bearer \(alice.token)")])
        #expect(try viaHeader.readHead().status == 200)
        let intruder = try server.stream("/users/\(alice.uid)/favorites.json", headers: [("Authorization", "Bearer \(bob.token)")])
        #expect(try intruder.readHead().status == 401)
        let anonymous = try server.stream("/users/\(alice.uid)/favorites.json")
        #expect(try anonymous.readHead().status == 401)
        let garbage = try server.stream("/users/\(alice.uid)/favorites.json?auth=garbage")
        #expect(try garbage.readHead().status == 401)
        await server.stop()
    }

    @Test func resumeAfterADisconnectLosesNothingAndDuplicatesNothing() async throws {
        let server = try LiveServer()
        _ = try server.request("PUT", "/list.json", #"{"a":1}"#)
        let first = try server.stream("/list.json")
        let snapshot = try first.nextEvent()
        _ = try server.request("PUT", "/list/b.json", "2")
        let seen = try first.nextEvent()
        #expect(seen.id == snapshot.id! + 1)
        first.close()  // forced disconnect
        for value in 3...5 { _ = try server.request("PUT", "/list/k\(value).json", "\(value)") }
        _ = try server.request("PUT", "/elsewhere.json", "0")
        let resumed = try server.stream("/list.json", headers: [("Last-Event-ID", "\(seen.id!)")])
        var replayed: [ReceivedEvent] = []
        for _ in 0..<3 { replayed.append(try resumed.nextEvent()) }
        #expect(replayed.map(\.id) == [seen.id! + 1, seen.id! + 2, seen.id! + 3])
        #expect(replayed.map(\.data) == [#"{"path":"/k3","data":3}"#, #"{"path":"/k4","data":4}"#, #"{"path":"/k5","data":5}"#])
        // Then live, with nothing in between (the write to /elsewhere is not ours).
        _ = try server.request("PUT", "/list/k6.json", "6")
        #expect(try resumed.nextEvent() == ReceivedEvent(name: "put", id: seen.id! + 5, data: #"{"path":"/k6","data":6}"#))
        await server.stop()
    }

    @Test func resumingPastTheLogGetsAFreshSnapshot() async throws {
        let server = try LiveServer { $0.store.changeLogRetention = 1 }
        let first = try server.stream("/list.json")
        let snapshot = try first.nextEvent()
        first.close()
        for value in 1...4 { _ = try server.request("PUT", "/list/k\(value).json", "\(value)") }
        let resumed = try server.stream("/list.json", headers: [("Last-Event-ID", "\(snapshot.id!)")])
        #expect(try resumed.nextEvent() == ReceivedEvent(
            name: "put", id: snapshot.id! + 4, data: #"{"path":"/","data":{"k1":1,"k2":2,"k3":3,"k4":4}}"#))
        // An id from the future (say, after a restore from backup) also resyncs.
        let future = try server.stream("/list.json", headers: [("Last-Event-ID", "999999")])
        #expect(try future.nextEvent().data == #"{"path":"/","data":{"k1":1,"k2":2,"k3":3,"k4":4}}"#)
        await server.stop()
    }

    @Test func concurrentWritersArriveInCommitOrderAndTheClientEndsInSync() async throws {
        let server = try LiveServer()
        let stream = try server.stream("/c.json")
        #expect(try stream.nextEvent().data == #"{"path":"/","data":null}"#)
        let writers = 4, each = 25
        let failures = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: writers) { writer in
            for i in 0..<each {
                let status = (try? liveRequest(port: server.port, "PUT", "/c/w\(writer)/n\(i).json", body: "\(i)").status) ?? 0
                if status != 200 { failures.add(1, ordering: .relaxed) }
            }
        }
        #expect(failures.load(ordering: .relaxed) == 0)
        var ids: [Int64] = []
        var mirror: [String: JSONValue] = [:]
        for _ in 0..<(writers * each) {
            let event = try stream.nextEvent()
            ids.append(event.id!)
            guard case .object(let body) = json(event.data), let path = body["path"]?.stringValue else { continue }
            mirror[path] = body["data"]
        }
        #expect(ids == ids.sorted() && Set(ids).count == ids.count)
        let stored = json(try server.request("GET", "/c.json").body)
        var rebuilt: [String: JSONValue] = [:]
        for (path, value) in mirror {
            let parts = path.split(separator: "/").map(String.init)
            var child = rebuilt[parts[0]]?.objectValue ?? [:]
            child[parts[1]] = value
            rebuilt[parts[0]] = .object(child)
        }
        #expect(JSONValue.object(rebuilt) == stored)
        await server.stop()
    }

    @Test func aSlowConsumerIsCutOffWhileAFastOneKeepsReceiving() async throws {
        let server = try LiveServer { $0.streams.maxQueuedBytes = 256 * 1024 }
        let slow = try server.stream("/big.json", receiveBuffer: 4096)
        #expect(try slow.readHead().status == 200)  // then never reads again
        let fast = try server.stream("/big.json")
        _ = try fast.nextEvent()
        let value = "\"" + String(repeating: "x", count: 4 * 1024) + "\""
        // ~6 MB in all: more than the kernel can buffer towards the slow reader (its 4 KiB
        // receive buffer, our send buffer of at most 4 MiB) plus the 256 KiB bound, while the
        // fast reader may fall up to 64 events behind without being cut off.
        let writes = 1_500
        let received = Atomic<Int>(0)
        let done = DispatchSemaphore(value: 0)
        let fastClient = UncheckedBox(fast)
        // A thread of its own: the test's blocking writes must not starve the reader.
        DispatchQueue.global().async {
            defer { done.signal() }
            for _ in 0..<writes {
                guard let event = try? fastClient.value.nextEvent(), event.name == "put" else { return }
                received.add(1, ordering: .relaxed)
            }
        }
        for i in 0..<writes { _ = try server.request("PUT", "/big/k\(i).json", value) }
        done.wait()
        #expect(received.load(ordering: .relaxed) == writes)
        // The slow one was ended: its connection closes (after whatever was in flight).
        #expect(slow.socket.waitForClose())
        #expect(server.service.openStreams == 1)
        await server.stop()
    }

    @Test func aRulesReloadThatRemovesAccessCancelsTheStream() async throws {
        let server = try LiveServer(rules: #"{"rules": {"a": {".read": true, ".write": true}, "b": {".read": true}}}"#)
        let a = try server.stream("/a.json")
        let b = try server.stream("/b.json")
        _ = try a.nextEvent()
        _ = try b.nextEvent()
        try writeFile(server.rulesPath, #"{"rules": {"b": {".read": true}, "a": {".write": true}}}"#)
        #expect(server.service.reloadRules())
        #expect(try a.nextEvent() == ReceivedEvent(name: "cancel", id: nil, data: "null"))
        #expect(a.socket.waitForClose())
        // The other stream still has access and stays.
        _ = try server.request("PUT", "/a/x.json", "1")
        #expect(server.service.openStreams == 1)
        #expect(b.socket.buffer.isEmpty)
        await server.stop()
    }

    @Test func aDataChangeThatRemovesAccessCancelsBeforeAnyEventOfIt() async throws {
        let rules = #"{"rules": {"rooms": {"$room": {".read": "data.child('public').val() === true", ".write": true}}}}"#
        let server = try LiveServer(rules: rules)
        _ = try server.request("PUT", "/rooms/r1.json", #"{"public":true,"topic":"hi"}"#)
        let stream = try server.stream("/rooms/r1.json")
        _ = try stream.nextEvent()
        _ = try server.request("PUT", "/rooms/r1/topic.json", #""still public""#)
        #expect(try stream.nextEvent().data == #"{"path":"/topic","data":"still public"}"#)
        _ = try server.request("PATCH", "/rooms/r1.json", #"{"public":false,"topic":"secret"}"#)
        #expect(try stream.nextEvent() == ReceivedEvent(name: "cancel", id: nil, data: "null"))
        #expect(stream.socket.waitForClose())
        await server.stop()
    }

    @Test func aRevokedAccountGetsAuthRevoked() async throws {
        let server = try LiveServer(rules: ReferenceRules.text) {
            $0.streamRevocationCheckInterval = 0.02
            $0.auth.userStatusCacheSeconds = 0
        }
        let user = try server.anonymousUser()
        let stream = try server.stream("/users/\(user.uid)/favorites.json", headers: [("Authorization", "Bearer \(user.token)")])
        _ = try stream.nextEvent()
        let deleted = try server.request("POST", "/v1/accounts:delete", #"{"idToken":"\#(user.token)"}"#, headers: [("Content-Type", "application/json")])
        #expect(deleted.status == 200)
        #expect(try stream.nextEvent() == ReceivedEvent(name: "auth_revoked", id: nil, data: "credential is no longer valid"))
        #expect(stream.socket.waitForClose())
        await server.stop()
    }

    @Test func streamCapsPerAddressAndInTotal() async throws {
        let server = try LiveServer { $0.streams.maxStreamsPerAddress = 2; $0.streams.maxStreams = 3 }
        let one = try server.stream("/a.json"), two = try server.stream("/a.json")
        #expect(try one.readHead().status == 200 && two.readHead().status == 200)
        let three = try server.stream("/a.json")
        #expect(try three.readHead().status == 429)
        #expect(try three.readErrorBody() == #"{"error":"Too many open streams from this address"}"#)
        one.close()
        #expect(one.socket.waitForClose())
        // The slot frees once the server saw the close; a later attempt gets it.
        var status = 0
        for _ in 0..<200 where status != 200 {
            status = try server.stream("/a.json").readHead().status
            if status != 200 { await Task.yield() }
        }
        #expect(status == 200)
        await server.stop()
    }

    @Test func keepAlivesFollowTheConfiguredInterval() async throws {
        let server = try LiveServer { $0.streams.keepAliveInterval = 0.05 }
        let stream = try server.stream("/a.json")
        _ = try stream.nextEvent()
        #expect(try stream.next() == ReceivedEvent(name: "keep-alive", id: nil, data: "null"))
        #expect(stream.rawEvents.last == "event: keep-alive\ndata: null\n\n")
        await server.stop()
    }

    @Test func theEmulatorOwnerIsRefusedOffLoopback() throws {
        var thrown: (any Error)?
        do {
            _ = try LiveServer { $0.host = "0.0.0.0"; $0.auth.acceptEmulatorOwner = true }
        } catch {
            thrown = error
        }
        #expect("\(thrown.map { "\($0)" } ?? "")".contains("loopback"))
    }

    @Test func theEmulatorOwnerStreamsAnywhereWhenEnabled() async throws {
        let server = try LiveServer(rules: #"{"rules": {}}"#) { $0.auth.acceptEmulatorOwner = true }
        let stream = try server.stream("/anything.json", headers: [("Authorization", "Bearer owner")])
        #expect(try stream.readHead().status == 200)
        let refused = try LiveServer(rules: #"{"rules": {}}"#)
        #expect(try refused.stream("/anything.json", headers: [("Authorization", "Bearer owner")]).readHead().status == 401)
        await server.stop()
        await refused.stop()
    }
}

/// Hands a non-Sendable client to one other thread that is its only user from then on.
struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

@Suite struct QueryStreamLiveTests {
    static let rules = #"{"rules": {"scores": {".read": "query.limitToLast <= 3", ".write": true, ".indexOn": ".value"}}}"#

    @Test func aQueryStreamFollowsTheWindowAsChildrenEnterAndLeave() async throws {
        let server = try LiveServer(rules: Self.rules)
        _ = try server.request("PUT", "/scores.json", #"{"ann":10,"bob":20,"cat":30}"#)
        let stream = try server.stream(#"/scores.json?orderBy=%22$value%22&limitToLast=2"#)
        #expect(try stream.nextEvent().data == #"{"path":"/","data":{"bob":20,"cat":30}}"#)
        _ = try server.request("PUT", "/scores/dan.json", "5")  // below the window: no event
        _ = try server.request("PUT", "/scores/eve.json", "25")  // enters; bob leaves
        #expect(try stream.nextEvent().data == #"{"path":"/","data":{"cat":30,"eve":25}}"#)
        _ = try server.request("DELETE", "/scores/cat.json")  // leaves; bob comes back
        #expect(try stream.nextEvent().data == #"{"path":"/","data":{"bob":20,"eve":25}}"#)
        await server.stop()
    }

    @Test func rechecksOfAQueryStreamSeeItsQuery() async throws {
        let rules = #"{"rules": {"open": {".write": true}, "scores": {".read": "query.limitToLast <= 3 && root.child('open').val() === true", ".write": true, ".indexOn": ".value"}}}"#
        let server = try LiveServer(rules: rules)
        _ = try server.request("PUT", "/open.json", "true")
        _ = try server.request("PUT", "/scores.json", #"{"a":1,"b":2,"c":3}"#)
        let stream = try server.stream(#"/scores.json?orderBy=%22$value%22&limitToLast=2"#)
        #expect(try stream.nextEvent().data == #"{"path":"/","data":{"b":2,"c":3}}"#)
        // A write re-checks this data-dependent decision, with the stream's query: still allowed.
        _ = try server.request("PUT", "/scores/d.json", "4")
        #expect(try stream.nextEvent().data == #"{"path":"/","data":{"c":3,"d":4}}"#)
        _ = try server.request("PUT", "/open.json", "false")
        #expect(try stream.nextEvent() == ReceivedEvent(name: "cancel", id: nil, data: "null"))
        await server.stop()
    }

    @Test func queryStreamsAreCheckedLikeQueries() async throws {
        let server = try LiveServer(rules: Self.rules)
        #expect(try server.stream(#"/scores.json?orderBy=%22$value%22&limitToLast=10"#).readHead().status == 401)  // rules see the query
        #expect(try server.stream(#"/scores.json?orderBy=%22name%22&limitToLast=2"#).readHead().status == 400)  // no index
        #expect(try server.stream("/scores.json?limitToLast=2").readHead().status == 400)  // no orderBy
        await server.stop()
    }
}
