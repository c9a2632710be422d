// The pure parts of `hearth-load floor` (Floor.swift): what it reads from a request head
// and a client frame, and the bytes it answers and pushes. No syscalls, no clocks; unit
// tested from literals (Tests/HearthLoadTests/FloorTests.swift).

/// Every limit of the floor server, named (house rule): past one, the connection gets an
/// error answer or is closed, never a crash.
enum FloorLimits {
    /// A request head: what a fan-out client sends is a few hundred bytes.
    static let maxHeadBytes = 16 * 1024
    /// A write's body (the favourites the writer sends are ~190 bytes).
    static let maxBodyBytes = 64 * 1024
    /// One client frame (auth with an ID token, a listen).
    static let maxFrameBytes = 16 * 1024
    /// Connections the server holds at most (`--max-connections`, and under the open-file
    /// limit); beyond it, new ones are closed at once.
    static let maxConnections = 1_000_000
    static let maxThreads = 64
    /// Frames queued for one sender thread that it has not sent yet; beyond it the push is
    /// counted as dropped for that thread's connections.
    static let maxQueuedPushes = 4_096
    static let listenBacklog: Int32 = 4_096
    /// How often an idle sender thread looks at its stop flag, ms.
    static let pollMilliseconds: Int32 = 100
}

/// What a request head asks for.
enum FloorRequest: Equatable {
    /// `GET /.ws…` with `Upgrade: websocket`: a wire-protocol session.
    case webSocket
    /// `GET <path>.json` with `Accept: text/event-stream`: an event stream.
    case stream
    /// `POST <location>.json` with a body of `contentLength` bytes: a new child of the location.
    case write(location: String, contentLength: Int)
    /// Anything else, with the status and message the answer carries.
    case refused(status: Int, message: String)

    /// Parses a whole head (without its final blank line).
    static func classify(_ head: [UInt8]) -> FloorRequest {
        let text = String(decoding: head, as: UTF8.self)
        let lines = text.split(separator: "\r\n", omittingEmptySubsequences: false)
        guard let first = lines.first else { return .refused(status: 400, message: "empty request") }
        let parts = first.split(separator: " ")
        guard parts.count == 3, parts[2].hasPrefix("HTTP/1.") else { return .refused(status: 400, message: "bad request line") }
        let method = parts[0], target = parts[1]
        var fields: [String: Substring] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            fields[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingSpaces()
        }
        let path = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)[0]
        switch method {
        case "GET":
            if path == "/.ws" {
                guard fields["upgrade"]?.lowercased() == "websocket" else { return .refused(status: 400, message: "not an upgrade") }
                return .webSocket
            }
            guard fields["accept"]?.contains("text/event-stream") == true else {
                return .refused(status: 400, message: "the floor server serves event streams only")
            }
            return .stream
        case "POST":
            guard path.hasSuffix(".json") else { return .refused(status: 400, message: "a write goes to <path>.json") }
            guard fields["transfer-encoding"] == nil else { return .refused(status: 400, message: "Content-Length bodies only") }
            guard let text = fields["content-length"], let length = Int(text), length >= 0 else {
                return .refused(status: 411, message: "Content-Length required")
            }
            guard length <= FloorLimits.maxBodyBytes else { return .refused(status: 413, message: "body over \(FloorLimits.maxBodyBytes) bytes") }
            return .write(location: String(path.dropLast(5)), contentLength: length)
        default:
            return .refused(status: 405, message: "the floor server takes GET and POST (one location's listeners)")
        }
    }
}

/// A masked frame from a WebSocket client (RFC 6455 §5.2), unmasked.
enum ClientFrame: Equatable {
    case incomplete
    case frame(opcode: UInt8, payload: [UInt8], length: Int)
    case invalid(String)

    static func parse(_ bytes: ArraySlice<UInt8>) -> ClientFrame {
        bytes.withUnsafeBytes { raw in
            guard raw.count >= 2 else { return .incomplete }
            guard raw[1] & 0x80 != 0 else { return .invalid("unmasked client frame") }
            guard raw[0] & 0x80 != 0 else { return .invalid("fragmented client frame") }
            guard let (declared, head) = FrameHead.declaredLength(raw) else { return .incomplete }
            guard declared <= UInt64(FloorLimits.maxFrameBytes) else { return .invalid("frame over \(FloorLimits.maxFrameBytes) bytes") }
            let length = Int(declared)
            guard raw.count >= head + 4 + length else { return .incomplete }
            let key = Array(raw[head..<(head + 4)])
            var payload = Array(raw[(head + 4)..<(head + 4 + length)])
            for index in payload.indices { payload[index] ^= key[index & 3] }
            return .frame(opcode: raw[0] & 0x0F, payload: payload, length: head + 4 + length)
        }
    }
}

/// The bytes the floor server sends: the same envelopes as Hearth's, so a push is as long
/// as Hearth's for the same write.
enum FloorMessages {
    /// The number of a wire request (`"r":N`), nil when it has none.
    static func requestNumber(_ payload: [UInt8]) -> Int? {
        let mark = Array(#""r":"#.utf8)
        guard let at = payload.withUnsafeBytes({ MarkerScanner.find(mark, in: $0) }) else { return nil }
        var index = at + mark.count, value = 0, digits = 0
        while index < payload.count, payload[index] >= 0x30, payload[index] <= 0x39, digits < Limits.maxMarkerDigits {
            value = value * 10 + Int(payload[index] - 0x30)
            digits += 1
            index += 1
        }
        return digits == 0 ? nil : value
    }

    /// A server frame: unmasked, final, text.
    static func textFrame(_ payload: [UInt8]) -> [UInt8] {
        FrameHead.encode(opcode: FrameHead.text, length: payload.count, masked: false) + payload
    }

    /// The upgrade's answer (the client checks the status; the accept key is not computed,
    /// which only a browser would check) and the wire protocol's handshake message.
    static let upgraded: [UInt8] = Array("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n".utf8)
        + textFrame(Array(#"{"d":{"d":{"h":"floor","s":"floor","ts":0,"v":"5"},"t":"h"},"t":"c"}"#.utf8))

    /// The answer to wire request `number`; a listen's (action "q") is preceded by the
    /// location's data (none), as Hearth sends it.
    static func answer(_ number: Int, listen: Bool) -> [UInt8] {
        let ok = textFrame(Array(#"{"d":{"b":{"d":{},"s":"ok"},"r":\#(number)},"t":"d"}"#.utf8))
        return listen ? textFrame(Array(#"{"d":{"a":"d","b":{"d":null,"p":"/"}},"t":"d"}"#.utf8)) + ok : ok
    }

    /// An event stream's head and its first event (the location's data: none).
    static let streamOpened: [UInt8] = Array(("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream; charset=utf-8\r\n"
        + "Cache-Control: no-cache\r\nConnection: close\r\n\r\nevent: put\nid: 0\ndata: {\"path\":\"/\",\"data\":null}\n\n").utf8)

    /// A write's answer: the new child's name, as Hearth answers a POST.
    static func written(name: String) -> [UInt8] {
        let body = #"{"name":"\#(name)"}"#
        return Array(("HTTP/1.1 200 OK\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: \(body.utf8.count)\r\n\r\n"
            + body).utf8)
    }

    static func refusal(status: Int, message: String) -> [UInt8] {
        let body = #"{"error":"\#(message)"}"#
        return Array(("HTTP/1.1 \(status) Refused\r\nContent-Type: application/json; charset=utf-8\r\n"
            + "Content-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n" + body).utf8)
    }

    /// The 20-character name of write `number` (a push ID's length).
    static func name(_ number: Int) -> String {
        let digits = String(number)
        return "-F" + String(repeating: "0", count: max(0, 18 - digits.count)) + digits
    }

    /// The push of a new child `name` holding `body` under `location` to wire listeners:
    /// Hearth's envelope (`{"d":{"a":"d","b":{"d":…,"p":…}},"t":"d"}`) in one text frame.
    static func wirePush(location: String, name: String, body: [UInt8]) -> [UInt8] {
        textFrame(Array(#"{"d":{"a":"d","b":{"d":"#.utf8) + body + Array(#","p":"\#(location)/\#(name)"}},"t":"d"}"#.utf8))
    }

    /// The same push to event streams: Hearth's `put` event with its id.
    static func ssePush(id: Int, name: String, body: [UInt8]) -> [UInt8] {
        Array("event: put\nid: \(id)\ndata: {\"path\":\"/\(name)\",\"data\":".utf8) + body + Array("}\n\n".utf8)
    }
}
