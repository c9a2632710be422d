#if canImport(Glibc)
import Glibc
#endif
import HearthTesting
import Dispatch
import Synchronization
@testable import HearthHTTP

/// A response as the raw client saw it.
struct RawResponse {
    var status: Int
    /// The status line's reason phrase.
    var reason: String = ""
    var headers: [(name: String, value: String)]
    var body: [UInt8]

    func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    var text: String { String(decoding: body, as: UTF8.self) }
}

struct ClientError: Error, CustomStringConvertible {
    var description: String
}

/// A blocking POSIX-socket HTTP client for live tests: it writes raw bytes (so tests can
/// send anything, malformed or pipelined) and parses responses itself. The receive
/// timeout is only a safety net so a broken server fails a test instead of hanging it;
/// every wait is for an event (bytes or end of stream), never a sleep.
final class RawClient {
    let fd: Int32
    private var buffer: [UInt8] = []

    /// Connects to 127.0.0.1:port; throws with errno on failure.
    init(port: Int, timeout: Int = 10) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw ClientError(description: "socket: errno \(errno)") }
        var tv = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        let code = connectToLoopback(fd, port: port, timeoutSeconds: timeout)
        if code != 0 {
            Glibc.close(fd)
            throw ClientError(description: "connect: errno \(code)")
        }
    }

    deinit {
        Glibc.close(fd)
    }

    /// errno of a connect attempt to 127.0.0.1:port (0 on success; the socket is closed).
    static func connectError(port: Int) -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        defer { Glibc.close(fd) }
        return connectToLoopback(fd, port: port)
    }

    func send(_ text: String) throws {
        try send(Array(text.utf8))
    }

    func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL)) }
            if n < 0 {
                if errno == EINTR { continue }
                throw ClientError(description: "send: errno \(errno)")
            }
            offset += n
        }
    }

    /// Half-closes the sending side.
    func finishSending() {
        Glibc.shutdown(fd, Int32(SHUT_WR))
    }

    /// Reads more bytes into the buffer; false at end of stream or on error/timeout.
    private func fill() -> Bool {
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

    /// The next complete response, or nil if the stream ended first. `head` says the
    /// request was HEAD (no body follows despite Content-Length).
    func readResponse(head: Bool = false) throws -> RawResponse? {
        var headEnd: Int?
        while true {
            headEnd = Self.find([13, 10, 13, 10], in: buffer)
            if headEnd != nil { break }
            if !fill() { return nil }
        }
        let headText = String(decoding: buffer[0..<headEnd!], as: UTF8.self)
        var lines = headText.split(separator: "\r\n", omittingEmptySubsequences: false).map(String.init)
        let statusLine = lines.removeFirst()
        let parts = statusLine.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, parts[0] == "HTTP/1.1", let status = Int(parts[1]) else {
            throw ClientError(description: "bad status line: \(statusLine)")
        }
        var headers: [(name: String, value: String)] = []
        for line in lines where !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else { throw ClientError(description: "bad header: \(line)") }
            headers.append((String(line[..<colon]), line[line.index(after: colon)...].trimmingSpaces))
        }
        buffer.removeFirst(headEnd! + 4)
        var response = RawResponse(status: status, reason: parts.count > 2 ? String(parts[2]) : "", headers: headers, body: [])
        let length = head || status < 200 || status == 204 || status == 304 ? 0 : Int(response.header("Content-Length") ?? "0") ?? 0
        while buffer.count < length {
            if !fill() { throw ClientError(description: "stream ended inside a body") }
        }
        response.body = Array(buffer[0..<length])
        buffer.removeFirst(length)
        return response
    }

    /// Exactly `count` bytes, or nil if the stream ended (or the safety timeout passed) first.
    func read(count: Int) -> [UInt8]? {
        while buffer.count < count {
            if !fill() { return nil }
        }
        defer { buffer.removeFirst(count) }
        return Array(buffer[0..<count])
    }

    /// Everything until the server closes (or the safety timeout).
    func readUntilClose() -> [UInt8] {
        while fill() {}
        defer { buffer = [] }
        return buffer
    }

    /// True if the server closed the stream with nothing more to read.
    func isClosedByServer() -> Bool {
        readUntilClose().isEmpty
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for i in 0...(haystack.count - needle.count) where haystack[i..<(i + needle.count)].elementsEqual(needle) {
            return i
        }
        return nil
    }
}

extension Substring {
    var trimmingSpaces: String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}

/// A handler built from a closure.
struct ClosureHandler: HTTPHandler {
    let body: @Sendable (HTTPRequest, HTTPResponder) -> Void

    init(_ body: @escaping @Sendable (HTTPRequest, HTTPResponder) -> Void) {
        self.body = body
    }

    func handle(_ request: HTTPRequest, responder: HTTPResponder) {
        body(request, responder)
    }
}

extension HTTPResponse {
    static func text(_ text: String, status: Int = 200) -> HTTPResponse {
        HTTPResponse(status: status, headers: HTTPHeaders([("Content-Type", "text/plain")]), body: Array(text.utf8))
    }
}

/// Answers `METHOD path body` for every request: lets tests see what the server parsed.
let echoHandler = ClosureHandler { request, responder in
    let body = "\(request.method) \(request.target) \(String(decoding: request.body, as: UTF8.self))"
    responder.respond(.text(body))
}

/// Runs `body` against a live server on 127.0.0.1, port 0, then shuts it down.
func withServer(
    limits: HTTPLimits = HTTPLimits(), handler: any HTTPHandler = echoHandler,
    _ body: (Int, HTTPServer) async throws -> Void
) async throws {
    let server = HTTPServer(
        configuration: HTTPServerConfiguration(host: "127.0.0.1", port: 0, ioQueueCount: 2, limits: limits),
        handler: handler)
    let port = try server.start()
    do {
        try await body(port, server)
    } catch {
        await server.shutdown(gracePeriod: 0)
        throw error
    }
    await server.shutdown(gracePeriod: 1)
}
