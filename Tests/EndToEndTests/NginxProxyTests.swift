#if canImport(Glibc)
import Glibc
#endif
import Foundation
import HearthTesting
import Synchronization
import Testing

/// Hearth behind the real nginx, configured by the production site file
/// `scripts/nginx/hearth.conf` (only its marked `upstream` and `listen` lines are rewritten,
/// see `NginxProcess.site`). nginx must be installed (Debian: nginx-light); without it
/// these tests fail rather than skip, so a CI image that lost nginx cannot go unnoticed.
@Suite struct NginxProxyTests {
    let dir = TemporaryDirectory()

    @Test func restThroughTheProxy() throws {
        let hearth = try HearthProcess.serve(dataDirectory: dir.path, environment: ["HEARTH_TRUSTED_PROXIES": "127.0.0.1"])
        let nginx = try NginxProcess.start(in: dir.path + "/nginx", upstreamPort: hearth.port)
        let base = nginx.baseURL

        let put = try curl("PUT", base + "/rooms/r1.json", body: #"{"name":"Lobby","seats":4}"#)
        #expect(put.status == 200)
        #expect(json(put.body) == json(#"{"name":"Lobby","seats":4}"#))
        let get = try curl("GET", base + "/rooms/r1.json")
        #expect(get.status == 200)
        #expect(get.body == #"{"name":"Lobby","seats":4}"#)
        #expect(get.headers["content-type"]?.hasPrefix("application/json") == true)
        // Really through nginx, and Hearth's own headers survive the trip.
        #expect(get.headers["server"]?.hasPrefix("nginx") == true)
        #expect(get.headers["access-control-allow-origin"] == "*")
        // nginx's request id reached Hearth (a trusted proxy), came back, and is in the
        // access log beside the client address nginx forwarded.
        let requestID = try #require(get.headers["x-request-id"])
        #expect(requestID.count == 32)
        try hearth.waitForLog("request_id=\(requestID)", count: 1)
        let line = hearth.log.split(separator: "\n").first { $0.contains("request_id=\(requestID)") } ?? ""
        #expect(line.contains("client=127.0.0.1") && line.contains("GET /rooms/r1.json 200"))
        #expect(try curl("GET", base + "/metrics").status == 404)
        // Hearth's own errors pass through unchanged.
        let bad = try curl("PUT", base + "/rooms/r2.json", body: "{not json")
        #expect(bad.status == 400)
        #expect((json(bad.body) as? [String: Any])?["error"] is String)

        // 2 MiB: over nginx's default client_max_body_size (1 MiB), under Hearth's 16 MiB.
        let large = "\"" + String(repeating: "a", count: 2 * 1024 * 1024) + "\""
        let stored = try curl("PUT", base + "/large.json?print=silent", body: large)
        #expect(stored.status == 204)
        #expect(try curl("GET", base + "/large.json").body.count == large.utf8.count)

        // One byte over 16 MiB: nginx refuses from the Content-Length alone, before any
        // body byte is sent, with the JSON error Hearth itself would give.
        let client = try ProxyClient(port: nginx.port)
        try client.send("PUT /toolarge.json HTTP/1.1\r\nHost: hearth.test\r\nContent-Length: \(16 * 1024 * 1024 + 1)\r\n\r\n")
        let refused = try client.readResponse()
        #expect(refused.status == 413)
        #expect(refused.header("content-type")?.hasPrefix("application/json") == true)
        #expect(refused.header("access-control-allow-origin") == "*")
        #expect(client.body == #"{"error":"Payload too large"}"#)
        #expect(try curl("GET", base + "/toolarge.json").body == "null")

        try nginx.stop()
        hearth.signal(SIGTERM)
        #expect(try hearth.waitForExit() == 0)
    }

    /// Each event crosses nginx while the stream stays open. Were nginx buffering the
    /// response (e.g. with `proxy_ignore_headers X-Accel-Buffering`), these small events
    /// would sit in its buffer until it filled or the stream ended, and the waits below
    /// would run into their safety timeout.
    @Test func streamEventsCrossTheProxyUnbuffered() throws {
        // No keep-alive during the test: a keep-alive could push buffered events out.
        let hearth = try HearthProcess.serve(
            dataDirectory: dir.path, environment: ["HEARTH_STREAM_KEEPALIVE_SECONDS": "3600"])
        let nginx = try NginxProcess.start(in: dir.path + "/nginx", upstreamPort: hearth.port)
        let base = nginx.baseURL
        #expect(try curl("PUT", base + "/rooms/r1.json", body: #"{"name":"Lobby"}"#).status == 200)

        let stream = try ProxyClient(port: nginx.port)
        try stream.send("GET /rooms/r1.json HTTP/1.1\r\nHost: hearth.test\r\nAccept: text/event-stream\r\n\r\n")
        try stream.waitForBody(containing: #"data: {"path":"/","data":{"name":"Lobby"}}"# + "\n\n")
        let head = try #require(stream.head)
        #expect(head.status == 200)
        #expect(head.header("content-type") == "text/event-stream; charset=utf-8")
        #expect(head.header("cache-control") == "no-cache")
        #expect(head.header("access-control-allow-origin") == "*")
        #expect(stream.body.hasPrefix("event: put\nid: "))

        // One write at a time, each event awaited before the next write: every event has
        // to cross nginx on its own.
        for seats in 1...3 {
            let put = try curl("PUT", base + "/rooms/r1/seats.json", body: String(seats))
            #expect(put.status == 200)
            let data = #"{"path":"/seats","data":"# + "\(seats)}"
            try stream.waitForBody(containing: "\ndata: \(data)\n\n")
            #expect(!stream.ended, "the event must arrive while the stream is open, not when it ends")
            #expect(stream.event(withData: data)?.hasPrefix("event: put\nid: ") == true)
        }
        let patch = try curl("PATCH", base + "/rooms/r1.json", body: #"{"name":"Hall"}"#)
        #expect(patch.status == 200)
        let patched = #"{"path":"/","data":{"name":"Hall"}}"#
        try stream.waitForBody(containing: "\ndata: \(patched)\n\n")
        #expect(!stream.ended)
        #expect(stream.event(withData: patched)?.hasPrefix("event: patch\nid: ") == true)

        try nginx.stop()
        hearth.signal(SIGTERM)
        #expect(try hearth.waitForExit() == 0)
    }
}

extension NginxProxyTests {
    /// The SDKs' WebSocket crosses nginx (`location = /.ws` in hearth.conf): our protocol
    /// client's handshake checks (the handshake's `h` must be nginx's host and port, as the
    /// client used them), pings, requests and answers, all through the proxy.
    @Test func theWireProtocolCrossesTheProxy() throws {
        let python = try pythonInterpreter()
        let hearth = try HearthProcess.serve(dataDirectory: dir.path)
        let nginx = try NginxProcess.start(in: dir.path + "/nginx", upstreamPort: hearth.port)
        let result = try runPythonDriver(python, script: "wire_client.py", arguments: ["handshake", String(nginx.port)], environment: [:])
        #expect(result.status == 0, "through nginx:\n\(result.stdout)\n\(result.stderr)\n\(nginx.log)")
        #expect(result.stdout.contains("ok handshake h echoes the Host"))
        #expect(result.stdout.hasSuffix("done\n"))
        try nginx.stop()
        hearth.signal(SIGTERM)
        #expect(try hearth.waitForExit() == 0)
    }
}

extension NginxProxyTests {
    /// A proxy that refuses the WebSocket upgrade (the site without its Upgrade headers,
    /// as some corporate proxies behave): `/.ws` fails, and the JS SDK's fallback, long
    /// polling (`/.lp`), carries the same session: handshake (its `h` is nginx's host and
    /// port), requests, pushes, a message of several segments, and onDisconnect when the
    /// client leaves. Driven by `lp_client.py`, written from the JS SDK's
    /// BrowserPollConnection.
    @Test func longPollingThroughAProxyThatRefusesTheUpgrade() throws {
        let python = try pythonInterpreter()
        let hearth = try HearthProcess.serve(dataDirectory: dir.path, environment: ["HEARTH_TRUSTED_PROXIES": "127.0.0.1"])
        let nginx = try NginxProcess.start(in: dir.path + "/nginx", upstreamPort: hearth.port, refuseUpgrade: true)
        let result = try runPythonDriver(python, script: "lp_client.py", arguments: ["proxy", String(nginx.port)], environment: [:])
        #expect(result.status == 0, "through nginx:\n\(result.stdout)\n\(result.stderr)\n\(nginx.log)")
        #expect(result.stdout.contains("ok the proxy passed no upgrade: /.ws is refused"))
        #expect(result.stdout.contains("ok onDisconnect ran when the client left"))
        #expect(result.stdout.hasSuffix("done\n"))
        try nginx.stop()
        hearth.signal(SIGTERM)
        #expect(try hearth.waitForExit() == 0)
    }
}

/// Why nginx could not be used.
struct NginxError: Error, CustomStringConvertible {
    var description: String
}

/// nginx as a foreground child (no daemon, its own prefix, pid file, temp paths and logs
/// in a test directory; never root-owned system paths) in front of one Hearth.
final class NginxProcess: @unchecked Sendable {  // set up in init; output is behind a Mutex
    let process = ChildProcess()
    let port: Int
    private let output = Mutex<String>("")
    private let outputChanged = DispatchSemaphore(value: 0)
    private let exited = DispatchSemaphore(value: 0)
    private let outputClosed = DispatchSemaphore(value: 0)

    /// Safety net for every wait on nginx or on bytes through it.
    static let eventTimeout: DispatchTimeInterval = .seconds(60)

    var baseURL: String { "http://127.0.0.1:\(port)" }
    var log: String { output.withLock { $0 } }

    /// /usr/sbin/nginx (Debian), else the first `nginx` on PATH.
    static func executable() throws -> String {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        for candidate in ["/usr/sbin/nginx"] + path.split(separator: ":").map({ $0 + "/nginx" })
        where FileManager.default.isExecutableFile(atPath: candidate) {
            return candidate
        }
        throw NginxError(description: "nginx not found at /usr/sbin/nginx or on PATH: install nginx-light (apt-get install nginx-light); CI does")
    }

    /// The production site file, found from this source file's place in the repository.
    static var siteFile: String {
        URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("scripts/nginx/hearth.conf").path
    }

    /// The site with its marked lines pointed at the test's ports: the one line marked
    /// `[hearth-test: upstream]` becomes `server 127.0.0.1:<upstreamPort>;`, the first line
    /// marked `[hearth-test: listen]` becomes `listen 127.0.0.1:<listenPort>;` and the
    /// other listen lines go (with `tls`, an `ssl` listen with that certificate and key).
    /// Comment lines are left alone. A missing marker fails loudly.
    /// With `refuseUpgrade`, the WebSocket's Upgrade and `Connection: upgrade` headers are
    /// not passed on (a proxy that breaks WebSockets).
    static func site(_ text: String, upstreamPort: Int, listenPort: Int, tls: TLSFiles? = nil, refuseUpgrade: Bool = false) throws -> String {
        var lines: [String] = []
        var upstreams = 0
        var listens = 0
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            let isComment = line.drop { $0 == " " || $0 == "\t" }.hasPrefix("#")
            if !isComment && line.contains("[hearth-test: upstream]") {
                upstreams += 1
                lines.append("    server 127.0.0.1:\(upstreamPort);")
            } else if !isComment && line.contains("[hearth-test: listen]") {
                listens += 1
                if listens == 1, let tls {
                    lines.append("    listen 127.0.0.1:\(listenPort) ssl;")
                    lines.append("    ssl_certificate \(tls.certificate);")
                    lines.append("    ssl_certificate_key \(tls.key);")
                } else if listens == 1 {
                    lines.append("    listen 127.0.0.1:\(listenPort);")
                }
            } else if refuseUpgrade && !isComment && line.contains("proxy_set_header Upgrade") {
                continue
            } else if refuseUpgrade && !isComment && line.contains(#"proxy_set_header Connection "upgrade""#) {
                lines.append(#"        proxy_set_header Connection "";"#)
            } else {
                lines.append(line)
            }
        }
        guard upstreams == 1, listens >= 1 else {
            throw NginxError(description: "\(siteFile): expected one [hearth-test: upstream] line and at least one [hearth-test: listen] line, found \(upstreams) and \(listens)")
        }
        return lines.joined(separator: "\n")
    }

    /// A port that was free a moment ago (nginx cannot bind port 0 and report it).
    static func freePort() throws -> Int {
        try freeLoopbackPort()
    }

    /// The minimal main config around the site: foreground, one worker, everything nginx
    /// writes inside `directory`. As root, workers stay root (the default `nobody` could
    /// not enter the private test directory); otherwise nginx ignores `user` anyway, so
    /// it is left out.
    static func mainConfig(directory: String, site: String) -> String {
        var user = ""
        if geteuid() == 0, let pw = getpwuid(geteuid()), let gr = getgrgid(getegid()) {
            user = "user \(String(cString: pw.pointee.pw_name)) \(String(cString: gr.pointee.gr_name));"
        }
        return """
        \(user)
        daemon off;
        master_process on;
        worker_processes 1;
        pid \(directory)/nginx.pid;
        error_log stderr notice;
        events { worker_connections 256; }
        http {
            access_log \(directory)/access.log;
            client_body_temp_path \(directory)/tmp/client_body;
            proxy_temp_path \(directory)/tmp/proxy;
            fastcgi_temp_path \(directory)/tmp/fastcgi;
            uwsgi_temp_path \(directory)/tmp/uwsgi;
            scgi_temp_path \(directory)/tmp/scgi;
            include \(site);
        }

        """
    }

    /// Starts nginx in front of Hearth on `upstreamPort`, on a free port; retries with
    /// another port when the chosen one was taken in the meantime.
    /// A certificate and its key (PEM files) for an https listen.
    struct TLSFiles { var certificate: String; var key: String }

    /// `siteText`: the site to run instead of the shipped one (the shipped one with a block
    /// a document adds), its marked lines rewritten the same way.
    static func start(in directory: String, upstreamPort: Int, tls: TLSFiles? = nil, refuseUpgrade: Bool = false,
                      siteText given: String? = nil) throws -> NginxProcess {
        let binary = try executable()
        let siteText = try given ?? String(contentsOfFile: siteFile, encoding: .utf8)
        try FileManager.default.createDirectory(atPath: directory + "/tmp", withIntermediateDirectories: true)
        var lastLog = ""
        for _ in 0..<5 {
            let port = try freePort()
            let sitePath = directory + "/hearth.conf"
            try site(siteText, upstreamPort: upstreamPort, listenPort: port, tls: tls, refuseUpgrade: refuseUpgrade).write(toFile: sitePath, atomically: true, encoding: .utf8)
            try mainConfig(directory: directory, site: sitePath).write(toFile: directory + "/nginx.conf", atomically: true, encoding: .utf8)
            let nginx = try NginxProcess(binary: binary, directory: directory, port: port)
            switch try nginx.waitUntilRunning() {
            case .running: return nginx
            case .portTaken: lastLog = nginx.log
            }
        }
        throw NginxError(description: "nginx found no free port in 5 attempts:\n\(lastLog)")
    }

    private init(binary: String, directory: String, port: Int) throws {
        self.port = port
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = ["-p", directory + "/", "-c", directory + "/nginx.conf", "-e", "stderr"]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        let (outputClosed, outputChanged) = (self.outputClosed, self.outputChanged)
        PipeReader.drain(pipe.fileHandleForReading, onData: { [weak self] data in
            self?.output.withLock { $0 += String(decoding: data, as: UTF8.self) }
            outputChanged.signal()
        }, onEnd: { outputClosed.signal() })
        process.terminationHandler = { [exited] _ in exited.signal() }
        try process.run()
    }

    enum Start { case running, portTaken }

    /// Waits for the master's "start worker process" notice (its listening socket is
    /// bound before that), or for it to exit.
    private func waitUntilRunning() throws -> Start {
        let deadline = DispatchTime.now() + Self.eventTimeout
        while true {
            let text = log
            if text.contains("start worker process") { return .running }
            if !process.isRunning {
                process.waitUntilExit()
                _ = outputClosed.wait(timeout: .now() + .seconds(5))  // the last words may still be in the pipe
                let text = log
                if text.contains("Address already in use") { return .portTaken }
                throw NginxError(description: "nginx exited with status \(process.terminationStatus):\n\(text)")
            }
            if DispatchTime.now() > deadline {
                stopNow()
                throw NginxError(description: "nginx did not start:\n\(text)")
            }
            _ = outputChanged.wait(timeout: .now() + .milliseconds(100))
        }
    }

    /// Fast shutdown (SIGTERM: the master stops its workers, then exits); asserts a clean exit.
    func stop() throws {
        process.signal(SIGTERM)
        if exited.wait(timeout: .now() + Self.eventTimeout) == .timedOut {
            stopNow()
            throw NginxError(description: "nginx did not exit on SIGTERM:\n\(log)")
        }
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "nginx log:\n\(log)")
    }

    /// SIGTERM then, if it hangs, SIGKILL. Never SIGKILL first: a killed master leaves its
    /// worker running and listening.
    private func stopNow() {
        guard process.isRunning else { return }
        process.signal(SIGTERM)
        if exited.wait(timeout: .now() + .seconds(10)) == .timedOut {
            process.signal(SIGKILL)
        }
    }

    deinit { stopNow() }
}

/// A raw HTTP/1.1 client for one request through nginx: it sees exactly which bytes have
/// arrived and when (curl would only show them at exit), and decodes nginx's chunked
/// framing itself. Waits are on received bytes, with `NginxProcess.eventTimeout` as the
/// safety net.
private final class ProxyClient {
    struct Head {
        var status: Int
        var headers: [(name: String, value: String)]
        func header(_ name: String) -> String? {
            headers.first { $0.name.lowercased() == name.lowercased() }?.value
        }
    }

    let fd: Int32
    private var raw: [UInt8] = []
    private var decoded: [UInt8] = []
    private(set) var head: Head?
    private var chunked = false
    /// The response is complete (last chunk) or the connection was closed.
    private(set) var ended = false

    var body: String { String(decoding: decoded, as: UTF8.self) }

    init(port: Int) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw NginxError(description: "socket: errno \(errno)") }
        let code = connectToLoopback(fd, port: port)
        if code != 0 {
            close(fd)
            throw NginxError(description: "connect to nginx on \(port): errno \(code)")
        }
    }

    deinit { close(fd) }

    func send(_ text: String) throws {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL)) }
            if n < 0 {
                if errno == EINTR { continue }
                throw NginxError(description: "send: errno \(errno)")
            }
            offset += n
        }
    }

    /// Waits until the decoded body contains `text`.
    func waitForBody(containing text: String, timeout: DispatchTimeInterval = NginxProcess.eventTimeout) throws {
        let deadline = DispatchTime.now() + timeout
        while !body.contains(text) {
            if ended { throw NginxError(description: "response ended before \(text.debugDescription) arrived; got:\n\(body)") }
            guard try receive(until: deadline) else {
                throw NginxError(description: "no \(text.debugDescription) within the safety timeout; got:\n\(body)")
            }
        }
    }

    /// Reads a whole response (until its end or the connection's).
    func readResponse(timeout: DispatchTimeInterval = NginxProcess.eventTimeout) throws -> Head {
        let deadline = DispatchTime.now() + timeout
        while !ended {
            guard try receive(until: deadline) else { throw NginxError(description: "response incomplete at the safety timeout:\n\(body)") }
        }
        guard let head else { throw NginxError(description: "connection closed without a response") }
        return head
    }

    /// The event (text up to its blank line) whose data line is `data`, if it arrived.
    func event(withData data: String) -> String? {
        body.components(separatedBy: "\n\n").first { $0.hasSuffix("\ndata: " + data) }
    }

    /// Receives what is there (waiting for it until `deadline`) and decodes it; false at
    /// the deadline.
    private func receive(until deadline: DispatchTime) throws -> Bool {
        let now = DispatchTime.now()
        guard now < deadline else { return false }
        var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let milliseconds = Int32(min((deadline.uptimeNanoseconds - now.uptimeNanoseconds) / 1_000_000 + 1, 60_000))
        let ready = poll(&pfd, 1, milliseconds)
        if ready < 0 && errno != EINTR { throw NginxError(description: "poll: errno \(errno)") }
        if ready <= 0 { return true }  // loop again; the deadline check ends it
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n < 0 {
            if errno == EINTR { return true }
            throw NginxError(description: "recv: errno \(errno)")
        }
        if n == 0 {
            ended = true
        } else {
            raw.append(contentsOf: chunk[0..<n])
        }
        try decode()
        return true
    }

    /// Moves what is complete from `raw` into `head` and `decoded`.
    private func decode() throws {
        let crlf: [UInt8] = [13, 10]
        if head == nil {
            guard let end = Self.find([13, 10, 13, 10], in: raw[...]) else { return }
            let lines = String(decoding: raw[..<end], as: UTF8.self).components(separatedBy: "\r\n")
            let status = lines[0].split(separator: " ")
            guard status.count >= 2, let code = Int(status[1]) else { throw NginxError(description: "bad status line \(lines[0])") }
            var headers: [(name: String, value: String)] = []
            for line in lines.dropFirst() {
                guard let colon = line.firstIndex(of: ":") else { continue }
                headers.append((String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
            }
            head = Head(status: code, headers: headers)
            chunked = head?.header("transfer-encoding")?.lowercased() == "chunked"
            raw.removeFirst(end + 4)
        }
        guard let head else { return }
        if !chunked {
            decoded += raw
            raw = []
            if let length = head.header("content-length").flatMap(Int.init), decoded.count >= length { ended = true }
            return
        }
        while let lineEnd = Self.find(crlf, in: raw[...]) {
            let sizeText = String(decoding: raw[..<lineEnd], as: UTF8.self).split(separator: ";")[0]
            guard let size = Int(sizeText.trimmingCharacters(in: .whitespaces), radix: 16) else {
                throw NginxError(description: "bad chunk size line \(sizeText.debugDescription)")
            }
            if size == 0 {
                ended = true
                raw = []
                return
            }
            guard raw.count >= lineEnd + 2 + size + 2 else { return }
            decoded += raw[(lineEnd + 2)..<(lineEnd + 2 + size)]
            raw.removeFirst(lineEnd + 2 + size + 2)
        }
    }

    private static func find(_ needle: [UInt8], in haystack: ArraySlice<UInt8>) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        let base = haystack.startIndex
        for i in base...(haystack.endIndex - needle.count) where haystack[i..<(i + needle.count)].elementsEqual(needle) {
            return i - base
        }
        return nil
    }
}
