#if canImport(Glibc)
import Glibc
#endif

/// Why a live client gave up.
public struct LiveClientError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// A blocking loopback TCP connection for live tests. The receive timeout is only a
/// safety net so a broken server fails a test instead of hanging it; every wait is for
/// bytes or the end of the stream, never a sleep. The net is wide: with every shard's
/// servers on two cores, a sign-up's answer once took longer than 20 s.
public final class LoopbackSocket {
    public let fd: Int32
    public internal(set) var buffer: [UInt8] = []

    public init(port: Int, timeoutSeconds: Int = 60, receiveBuffer: Int? = nil) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw LiveClientError("socket: errno \(errno)") }
        Self.setTimeouts(fd, seconds: timeoutSeconds)
        if var size = receiveBuffer.map(Int32.init) {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        let code = connectToLoopback(fd, port: port, timeoutSeconds: timeoutSeconds)
        if code != 0 {
            Glibc.close(fd)
            throw LiveClientError("connect: errno \(code)")
        }
    }

    /// Takes over a connected descriptor (an accepted connection, `LoopbackListener`).
    public init(adopting fd: Int32, timeoutSeconds: Int = 60) {
        self.fd = fd
        Self.setTimeouts(fd, seconds: timeoutSeconds)
    }

    /// The safety-net timeouts of every receive and send.
    static func setTimeouts(_ fd: Int32, seconds: Int) {
        var tv = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { Glibc.close(fd) }

    public func send(_ text: String) throws {
        try send(bytes: Array(text.utf8))
    }

    public func send(bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL)) }
            if n < 0 {
                if errno == EINTR { continue }
                throw LiveClientError("send: errno \(errno)")
            }
            offset += n
        }
    }

    /// Reads more bytes into the buffer; false at end of stream (or reset, or the safety timeout).
    func fill() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n > 0 {
                buffer.append(contentsOf: chunk[0..<n])
                return true
            }
            if n < 0 && errno == EINTR { continue }
            return false
        }
    }

    /// Reads until `delimiter`; returns the bytes before it (consumed with it), nil at end.
    public func read(until delimiter: [UInt8]) -> [UInt8]? {
        var searchFrom = 0
        while true {
            if buffer.count >= delimiter.count {
                var index = searchFrom
                while index + delimiter.count <= buffer.count {
                    if buffer[index..<(index + delimiter.count)].elementsEqual(delimiter) {
                        let found = Array(buffer[0..<index])
                        buffer.removeFirst(index + delimiter.count)
                        return found
                    }
                    index += 1
                }
                searchFrom = max(0, buffer.count - delimiter.count + 1)
            }
            if !fill() { return nil }
        }
    }

    /// Reads exactly `count` bytes, or nil at end.
    public func read(count: Int) -> [UInt8]? {
        while buffer.count < count { if !fill() { return nil } }
        let found = Array(buffer[0..<count])
        buffer.removeFirst(count)
        return found
    }

    /// Waits for the peer to close; true when it did (false on the safety timeout).
    public func waitForClose() -> Bool {
        while true {
            var chunk = [UInt8](repeating: 0, count: 16 * 1024)
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n == 0 { return true }
            if n > 0 { buffer.append(contentsOf: chunk[0..<n]); continue }
            if errno == EINTR { continue }
            return errno == ECONNRESET
        }
    }
}

/// A response head as a live client saw it.
public struct LiveHead {
    public var status: Int
    public var headers: [(name: String, value: String)]

    public func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }
}

/// One request on its own connection (`Connection: close`): status and body.
public func liveRequest(
    port: Int, _ method: String, _ target: String, body: String? = nil, headers: [(String, String)] = [], host: String = "127.0.0.1"
) throws -> (status: Int, body: String) {
    let (head, text) = try liveExchange(port: port, method, target, body: body, headers: headers, host: host)
    return (head.status, text)
}

/// One request on its own connection (`Connection: close`): the response's head and body.
public func liveExchange(
    port: Int, _ method: String, _ target: String, body: String? = nil, headers: [(String, String)] = [], host: String = "127.0.0.1"
) throws -> (head: LiveHead, body: String) {
    let socket = try LoopbackSocket(port: port)
    var request = "\(method) \(target) HTTP/1.1\r\nHost: \(host)\r\nConnection: close\r\n"
    for (name, value) in headers { request += "\(name): \(value)\r\n" }
    if let body { request += "Content-Length: \(body.utf8.count)\r\n" }
    request += "\r\n" + (body ?? "")
    try socket.send(request)
    guard let head = readHead(socket) else { throw LiveClientError("no response to \(method) \(target)") }
    var rest = socket.buffer
    while socket.fill() { rest = socket.buffer }
    rest = socket.buffer
    if let length = head.header("Content-Length").flatMap(Int.init) { rest = Array(rest.prefix(length)) }
    return (head, String(decoding: rest, as: UTF8.self))
}

func readHead(_ socket: LoopbackSocket) -> LiveHead? {
    guard let head = socket.read(until: Array("\r\n\r\n".utf8)) else { return nil }
    var lines = String(decoding: head, as: UTF8.self).split(separator: "\r\n").map(String.init)
    guard !lines.isEmpty else { return nil }
    let status = lines.removeFirst().split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
    let headers = lines.compactMap { line -> (name: String, value: String)? in
        guard let colon = line.firstIndex(of: ":") else { return nil }
        return (String(line[..<colon]), String(line[line.index(after: colon)...].drop { $0 == " " }))
    }
    return LiveHead(status: status, headers: headers)
}

/// One server-sent event (WHATWG HTML §9.2), as received.
public struct ReceivedEvent: Equatable, CustomStringConvertible {
    public var name: String
    public var id: Int64?
    public var data: String

    public init(name: String, id: Int64?, data: String) {
        self.name = name
        self.id = id
        self.data = data
    }

    public var description: String { "\(name)#\(id.map(String.init) ?? "-") \(data)" }
}

/// An SSE subscriber over one connection: sends the stream request, then reads events.
public final class EventStreamClient {
    public let socket: LoopbackSocket
    public private(set) var head: LiveHead?
    /// The raw bytes of every event read so far, for exact-byte assertions.
    public private(set) var rawEvents: [String] = []

    public init(port: Int, target: String, headers: [(String, String)] = [], receiveBuffer: Int? = nil) throws {
        socket = try LoopbackSocket(port: port, receiveBuffer: receiveBuffer)
        var request = "GET \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n"
        for (name, value) in headers { request += "\(name): \(value)\r\n" }
        try socket.send(request + "\r\n")
    }

    /// The response head (read once).
    public func readHead() throws -> LiveHead {
        if let head { return head }
        guard let read = HearthTesting.readHead(socket) else { throw LiveClientError("stream closed before its head") }
        head = read
        return read
    }

    /// The body of a refused stream (a JSON error with Content-Length).
    public func readErrorBody() throws -> String {
        let head = try readHead()
        let length = head.header("Content-Length").flatMap(Int.init) ?? 0
        guard let body = socket.read(count: length) else { throw LiveClientError("short error body") }
        return String(decoding: body, as: UTF8.self)
    }

    /// The next event, or nil when the stream ended.
    public func next() throws -> ReceivedEvent? {
        _ = try readHead()
        guard let raw = socket.read(until: Array("\n\n".utf8)) else { return nil }
        let text = String(decoding: raw, as: UTF8.self)
        rawEvents.append(text + "\n\n")
        var event = ReceivedEvent(name: "message", id: nil, data: "")
        var data: [String] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("event: ") { event.name = String(line.dropFirst(7)) }
            else if line.hasPrefix("id: ") { event.id = Int64(line.dropFirst(4)) }
            else if line.hasPrefix("data: ") { data.append(String(line.dropFirst(6))) }
        }
        event.data = data.joined(separator: "\n")
        return event
    }

    /// The next event, skipping keep-alives by default; throws if the stream ended.
    public func nextEvent(skippingKeepAlives: Bool = true) throws -> ReceivedEvent {
        while let event = try next() {
            if skippingKeepAlives && event.name == "keep-alive" { continue }
            return event
        }
        throw LiveClientError("the stream ended")
    }

    public func close() {
        shutdown(socket.fd, Int32(SHUT_RDWR))
    }
}

/// Waits until `condition` holds, looking every 10 ms, with a 60 s safety net that fails
/// (throws) naming `what`: for events a test cannot be told of directly.
public func pollUntil(_ what: String, _ condition: () throws -> Bool) throws {
    let deadline = ContinuousClock.now + .seconds(60)
    while try !condition() {
        guard ContinuousClock.now < deadline else { throw LiveClientError("timed out waiting for \(what)") }
        usleep(10_000)
    }
}

/// `pollUntil` for async tests: between looks it suspends rather than blocking its thread,
/// so tests waiting at once do not hold the cooperative pool's few threads (other tests'
/// tasks, and this test's own callbacks, go on running meanwhile).
/// `showing`, read only when the wait runs out, says what the test saw instead (the state
/// behind a timeout, for the reader of a failed run).
public func waitUntil(_ what: String, showing state: @autoclosure () -> String = "", _ condition: () throws -> Bool) async throws {
    let deadline = ContinuousClock.now + .seconds(60)
    while try !condition() {
        guard ContinuousClock.now < deadline else {
            let seen = state()
            throw LiveClientError("timed out waiting for \(what)" + (seen.isEmpty ? "" : "; instead: \(seen)"))
        }
        try await Task.sleep(for: .milliseconds(10))
    }
}
