#if canImport(Glibc)
import Glibc
#endif
import HearthSystem
@testable import hearth_load
import Testing

// The push floor's server (hearth-load floor): its request and frame parsing from literals,
// then the server itself on 127.0.0.1 port 0, driven by the load generator's own fan-out
// client in this process, and by raw sockets for what it must refuse.

@Suite struct FloorProtocolTests {
    @Test func classifiesTheFanOutClientsRequests() {
        let upgrade = Requests.upgrade(host: "127.0.0.1", port: 1, namespace: "bench", key: "a2V5a2V5a2V5a2V5a2V5a2V5")
        #expect(FloorRequest.classify(Self.head(upgrade)) == .webSocket)
        let stream = Requests.stream(host: "127.0.0.1", port: 1, path: "/users/u/favorites", token: "t")
        #expect(FloorRequest.classify(Self.head(stream)) == .stream)
        let write = Requests.write(method: "POST", host: "127.0.0.1", port: 1, path: "/users/u/favorites", token: "t",
                                   body: Array(#"{"a":1}"#.utf8))
        #expect(FloorRequest.classify(Self.head(write)) == .write(location: "/users/u/favorites", contentLength: 7))
    }

    @Test func refusesWhatItDoesNotServe() {
        func classify(_ text: String) -> FloorRequest { FloorRequest.classify(Array(text.utf8)) }
        #expect(classify("PUT /a.json HTTP/1.1\r\nContent-Length: 1") == .refused(status: 405,
                message: "the floor server takes GET and POST (one location's listeners)"))
        #expect(classify("POST /a.json HTTP/1.1\r\nHost: x") == .refused(status: 411, message: "Content-Length required"))
        #expect(classify("POST /a.json HTTP/1.1\r\nContent-Length: -1") == .refused(status: 411, message: "Content-Length required"))
        #expect(classify("POST /a.json HTTP/1.1\r\nContent-Length: \(FloorLimits.maxBodyBytes + 1)")
                == .refused(status: 413, message: "body over \(FloorLimits.maxBodyBytes) bytes"))
        #expect(classify("POST /a.json HTTP/1.1\r\nContent-Length: \(FloorLimits.maxBodyBytes)")
                == .write(location: "/a", contentLength: FloorLimits.maxBodyBytes))
        #expect(classify("POST /a.json HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 1")
                == .refused(status: 400, message: "Content-Length bodies only"))
        #expect(classify("POST /a HTTP/1.1\r\nContent-Length: 1") == .refused(status: 400, message: "a write goes to <path>.json"))
        #expect(classify("GET /.ws HTTP/1.1\r\nHost: x") == .refused(status: 400, message: "not an upgrade"))
        #expect(classify("GET /a.json HTTP/1.1\r\nAccept: application/json")
                == .refused(status: 400, message: "the floor server serves event streams only"))
        #expect(classify("GET /a.json") == .refused(status: 400, message: "bad request line"))
        #expect(classify("") == .refused(status: 400, message: "bad request line"))
    }

    @Test func unmasksAClientFrameAndWaitsForAWholeOne() {
        var masker = FrameMasker(seed: 7)
        let payload = Requests.listen(path: "/users/u/favorites")
        let frame = masker.frame(opcode: FrameHead.text, payload)
        #expect(ClientFrame.parse(frame[...]) == .frame(opcode: FrameHead.text, payload: payload, length: frame.count))
        #expect(ClientFrame.parse(frame.dropLast()) == .incomplete)
        #expect(ClientFrame.parse(frame.prefix(1)) == .incomplete)
        // a frame after other bytes: indices of a slice do not start at 0
        let both = [UInt8](repeating: 0, count: 3) + frame
        #expect(ClientFrame.parse(both[3...]) == .frame(opcode: FrameHead.text, payload: payload, length: frame.count))
        let long = [UInt8](repeating: 0x61, count: 300)
        let longFrame = masker.frame(opcode: FrameHead.text, long)
        #expect(ClientFrame.parse(longFrame[...]) == .frame(opcode: FrameHead.text, payload: long, length: longFrame.count))
    }

    @Test func refusesFramesAClientMustNotSendAndFramesOverTheLimit() {
        #expect(ClientFrame.parse([0x81, 0x01, 0x61][...]) == .invalid("unmasked client frame"))
        #expect(ClientFrame.parse([0x01, 0x81, 0, 0, 0, 0, 0x61][...]) == .invalid("fragmented client frame"))
        let over = FloorLimits.maxFrameBytes + 1
        #expect(ClientFrame.parse([0x81, 0xFE, UInt8(over >> 8), UInt8(over & 0xFF)][...])
                == .invalid("frame over \(FloorLimits.maxFrameBytes) bytes"))
        #expect(ClientFrame.parse([0x81, 0xFF, 0x80, 0, 0, 0, 0, 0, 0, 0][...]) == .invalid("frame over \(FloorLimits.maxFrameBytes) bytes"))
        // the 64-bit form, within the limit, waits for its payload
        #expect(ClientFrame.parse([0x81, 0xFF, 0, 0, 0, 0, 0, 0, 0, 1][...]) == .incomplete)
        let at = FloorLimits.maxFrameBytes
        #expect(ClientFrame.parse([0x81, 0xFE, UInt8(at >> 8), UInt8(at & 0xFF)][...]) == .incomplete)
    }

    @Test func pushesHaveHearthsEnvelopes() {
        let body = Array(#"{"note":"bm1-3."}"#.utf8)
        let name = FloorMessages.name(42)
        #expect(name == "-F000000000000000042" && name.utf8.count == 20)
        let wire = FloorMessages.wirePush(location: "/users/u/favorites", name: name, body: body)
        let payload = #"{"d":{"a":"d","b":{"d":{"note":"bm1-3."},"p":"/users/u/favorites/-F000000000000000042"}},"t":"d"}"#
        #expect(wire == [0x81, UInt8(payload.utf8.count)] + Array(payload.utf8))
        let sse = FloorMessages.ssePush(id: 42, name: name, body: body)
        #expect(String(decoding: sse, as: UTF8.self)
                == "event: put\nid: 42\ndata: {\"path\":\"/-F000000000000000042\",\"data\":{\"note\":\"bm1-3.\"}}\n\n")
        #expect(FloorMessages.requestNumber(Requests.auth(token: "t")) == 1)
        #expect(FloorMessages.requestNumber(Array(#"{"t":"d"}"#.utf8)) == nil)
        // the generator's own parsers read the floor's answers
        let frames = FloorMessages.answer(2, listen: true)
        let data = Array(frames[2..<(2 + Int(frames[1]))])
        let ok = Array(frames[(2 + Int(frames[1]) + 2)...])
        #expect(data.withUnsafeBytes { WireControl.classify($0) } == .other)
        #expect(ok.withUnsafeBytes { WireControl.classify($0) } == .answer(number: 2, status: "ok"))
        #expect(Array(FloorMessages.upgraded.suffix(from: FloorMessages.upgraded.count - 68)).withUnsafeBytes {
            WireControl.classify($0)
        } == .handshake)
    }

    @Test func framesEveryLength() {
        #expect(FloorMessages.textFrame([UInt8](repeating: 1, count: 125)).prefix(2) == [0x81, 125])
        #expect(FloorMessages.textFrame([UInt8](repeating: 1, count: 126)).prefix(4) == [0x81, 126, 0, 126])
        #expect(FloorMessages.textFrame([UInt8](repeating: 1, count: 70_000)).prefix(10) == [0x81, 127, 0, 0, 0, 0, 0, 1, 0x11, 0x70])
    }

    @Test func refusesOptionsPastTheirLimits() throws {
        #expect(try FloorOptions.parse(["floor", "--threads", "\(FloorLimits.maxThreads)"]).threads == FloorLimits.maxThreads)
        #expect(throws: LoadError.self) { try FloorOptions.parse(["floor", "--threads", "\(FloorLimits.maxThreads + 1)"]) }
        #expect(throws: LoadError.self) { try FloorOptions.parse(["floor", "--threads", "0"]) }
        #expect(try FloorOptions.parse(["floor", "--max-connections", "\(FloorLimits.maxConnections)"]).maxConnections
                == FloorLimits.maxConnections)
        #expect(throws: LoadError.self) { try FloorOptions.parse(["floor", "--max-connections", "\(FloorLimits.maxConnections + 1)"]) }
        #expect(throws: LoadError.self) { try FloorOptions.parse(["floor", "--port", "65536"]) }
        #expect(throws: LoadError.self) { try FloorOptions.parse(["floor", "--port"]) }
        #expect(throws: LoadError.self) { try FloorOptions.parse(["floor", "--colour", "red"]) }
    }

    /// A sender that fell behind keeps at most `maxQueuedPushes` and counts the rest.
    @Test func aSenderQueuesPushesUpToItsLimit() throws {
        let sender = try FloorSender(control: try FloorControl())
        for _ in 0...FloorLimits.maxQueuedPushes { sender.push(wire: [1], sse: [2]) }
        let (queued, dropped) = sender.inbox.withLock { ($0.pushes.count, $0.droppedPushes) }
        #expect(queued == FloorLimits.maxQueuedPushes)
        #expect(dropped == 1)
    }

    /// A request's head without its blank line.
    static func head(_ request: [UInt8]) -> [UInt8] {
        let end = request.withUnsafeBytes { MarkerScanner.find(Array("\r\n\r\n".utf8), in: $0) }!
        return Array(request[..<end])
    }
}

/// A floor server on 127.0.0.1 port 0 on a thread of its own, stopped and joined by `stop()`.
///
/// `@unchecked Sendable`: the server is created here and from then on touched only by the
/// thread that runs it; the test thread reads `port` (set before that thread starts) and
/// stops it through `control`, which is Sendable.
final class RunningFloor: @unchecked Sendable {
    let port: Int
    private let control: FloorControl
    private let server: FloorServer
    private var thread: pthread_t?

    init(threads: Int, maxConnections: Int = FloorLimits.maxConnections) throws {
        var options = FloorOptions()
        options.threads = threads
        options.maxConnections = maxConnections
        control = try FloorControl()
        server = try FloorServer(options: options, control: control)
        port = try server.port()
        thread = try Syscall.spawnThread { [self] in try? self.server.run() }
    }

    func stop() {
        control.requestStop()
        if let thread { Syscall.joinThread(thread) }
        thread = nil
    }

    /// One raw exchange: sends `request`, reads until the server closes (at most 10 s).
    func exchange(_ request: [UInt8]) throws -> String {
        let fd = try Syscall.connect(host: "127.0.0.1", port: port, timeoutSeconds: 10)
        defer { try? Syscall.close(fd) }
        #expect(try Net.sendAll(fd, request))
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4_096)
        while case .done(let count) = try buffer.withUnsafeMutableBytes({ try Syscall.receive(fd, into: $0) }), count > 0 {
            answer += buffer[..<count]
        }
        return String(decoding: answer, as: UTF8.self)
    }
}

@Suite struct FloorServerLiveTests {
    /// The fan-out client's own measurement against the floor: every write's push arrives
    /// on every connection, over wire and SSE, from two sender threads.
    @Test(arguments: [Transport.wire, .sse])
    func everyPushReachesEveryListener(transport: Transport) throws {
        let floor = try RunningFloor(threads: 2)
        defer { floor.stop() }
        var options = Options()
        options.transport = transport
        options.port = floor.port
        options.uid = "u"
        options.token = "t"
        options.subscribers = 40
        options.rate = 20
        options.duration = 0.5
        options.settle = 0
        options.quietPercent = 100
        options.quietWait = 0
        let result = try Fanout(options: options).run()
        #expect(result["subscribers_ready"] == .integer(40))
        #expect(result["writes_ok"] == .integer(options.writeCount))
        #expect(result["events_expected"] == .integer(40 * options.writeCount))
        #expect(result["events_delivered"] == .integer(40 * options.writeCount))
        #expect(result["lost_streams"] == .integer(0))
    }

    @Test func refusesWithAnErrorAndCloses() throws {
        let floor = try RunningFloor(threads: 1)
        defer { floor.stop() }
        let put = try floor.exchange(Array("PUT /a.json HTTP/1.1\r\nContent-Length: 0\r\n\r\n".utf8))
        #expect(put.hasPrefix("HTTP/1.1 405 "))
        #expect(put.hasSuffix(#"{"error":"the floor server takes GET and POST (one location's listeners)"}"#))
        // a head that never ends, past the limit
        let endless = try floor.exchange(Array("GET /a.json HTTP/1.1\r\nX: ".utf8) + [UInt8](repeating: 0x61, count: FloorLimits.maxHeadBytes))
        #expect(endless.hasPrefix("HTTP/1.1 431 "))
        #expect(endless.hasSuffix(#"{"error":"request head over \#(FloorLimits.maxHeadBytes) bytes"}"#))
        // an unmasked frame after the upgrade ends the session
        let upgrade = Requests.upgrade(host: "127.0.0.1", port: floor.port, namespace: "bench", key: "a2V5a2V5a2V5a2V5a2V5a2V5")
        let unmasked = try floor.exchange(upgrade + [0x81, 0x01, 0x61])
        #expect(unmasked.hasPrefix("HTTP/1.1 101 "))
        #expect(unmasked == String(decoding: FloorMessages.upgraded, as: UTF8.self))
    }

    /// Past `--max-connections` held (setting up or live), a new connection is closed at
    /// once, without an answer; one that ends makes room again.
    @Test func closesConnectionsPastItsLimit() throws {
        let floor = try RunningFloor(threads: 1, maxConnections: 2)
        defer { floor.stop() }
        let first = try Syscall.connect(host: "127.0.0.1", port: floor.port, timeoutSeconds: 10)
        defer { try? Syscall.close(first) }
        // Held beside the first, answered and closed by the server, which counts it out
        // before the end of stream reaches us.
        #expect(try floor.exchange(Array("PUT /a.json HTTP/1.1\r\nContent-Length: 0\r\n\r\n".utf8)).hasPrefix("HTTP/1.1 405 "))
        // So a live stream fits as the second.
        let second = try Syscall.connect(host: "127.0.0.1", port: floor.port, timeoutSeconds: 10)
        defer { try? Syscall.close(second) }
        #expect(try Net.sendAll(second, Requests.stream(host: "127.0.0.1", port: floor.port, path: "/a", token: "t")))
        var buffer = [UInt8](repeating: 0, count: 4_096)
        guard case .done(let count) = try buffer.withUnsafeMutableBytes({ try Syscall.receive(second, into: $0) }) else {
            Issue.record("the stream got no answer")
            return
        }
        #expect(String(decoding: buffer[..<count], as: UTF8.self).hasPrefix("HTTP/1.1 200 OK"))
        // Two held: the third is closed at once, before any answer.
        let third = try Syscall.connect(host: "127.0.0.1", port: floor.port, timeoutSeconds: 10)
        defer { try? Syscall.close(third) }
        let ending = try buffer.withUnsafeMutableBytes { try Syscall.receive(third, into: $0) }
        guard case .done(let received) = ending else {
            Issue.record("the third connection was kept (no end of stream within 10 s)")
            return
        }
        #expect(received == 0)
    }

    @Test func answersPipelinedWritesInOrder() throws {
        let floor = try RunningFloor(threads: 1)
        defer { floor.stop() }
        let write = Requests.write(method: "POST", host: "127.0.0.1", port: floor.port, path: "/a", token: "t", body: Array("{}".utf8))
        let refused = Array("GET / HTTP/1.1\r\n\r\n".utf8)
        let answers = try floor.exchange(write + write + refused)
        #expect(answers.split(separator: "HTTP/1.1 200 OK", omittingEmptySubsequences: false).count == 3)
        #expect(answers.contains(#"{"name":"-F000000000000000001"}"#) && answers.contains(#"{"name":"-F000000000000000002"}"#))
        #expect(answers.hasSuffix(#"{"error":"the floor server serves event streams only"}"#))
    }
}
