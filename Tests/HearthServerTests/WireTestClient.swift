import HearthJSON
import HearthTesting

/// A minimal wire-protocol client over a WebSocket on 127.0.0.1 (docs/protocol/wire.md):
/// requests one at a time, each answered before the next; pushes that arrive before an
/// answer are kept in `pushes`. Requests are small (one frame each); a long message from the
/// server comes in the SDKs' chunks (a frame with their count, then the chunks) and is joined.
public final class WireTestClient {
    let socket: LoopbackSocket
    private var number: Int64 = 0
    /// Data pushes (`d`, `m`) received so far, as their bodies.
    public private(set) var pushes: [JSONValue] = []

    /// Connects and reads the server's handshake; `query`: e.g. `ns=env-a`;
    /// `receiveBuffer`: the socket's `SO_RCVBUF`, to keep the kernel from taking much on
    /// the client's behalf.
    public init(port: Int, query: String? = nil, receiveBuffer: Int? = nil) throws {
        socket = try LoopbackSocket(port: port, receiveBuffer: receiveBuffer)
        let target = "/.ws?v=5" + (query.map { "&" + $0 } ?? "")
        try socket.send("GET \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n")
        guard let head = socket.read(until: Array("\r\n\r\n".utf8)), String(decoding: head, as: UTF8.self).hasPrefix("HTTP/1.1 101") else {
            throw LiveClientError("no WebSocket upgrade")
        }
        _ = try message()  // the handshake (`c`/`h`)
    }

    /// Sends request `action` with `body` and returns the answer's body (`{"s":…,"d":…}`).
    public func request(_ action: String, _ body: JSONValue) throws -> JSONValue {
        number += 1
        let message: JSONValue = .object(["t": "d", "d": .object(["r": .int(number), "a": .string(action), "b": body])])
        try send(JSONWriter.write(message, style: .compact))
        while true {
            let data = try self.message().objectValue?["d"]?.objectValue ?? [:]
            if data["r"] == .int(number) { return data["b"] ?? .null }
            if let action = data["a"]?.stringValue, action == "d" || action == "m", let pushed = data["b"] { pushes.append(pushed) }
        }
    }

    /// Reads until `count` data pushes were received in all.
    public func waitForPushes(_ count: Int) throws {
        while pushes.count < count {
            let data = try message().objectValue?["d"]?.objectValue ?? [:]
            if let action = data["a"]?.stringValue, action == "d" || action == "m", let pushed = data["b"] { pushes.append(pushed) }
        }
    }

    private func send(_ payload: [UInt8]) throws {
        let mask: [UInt8] = [7, 13, 29, 61]
        var frame: [UInt8] = [0x81]
        if payload.count < 126 {
            frame.append(0x80 | UInt8(payload.count))
        } else {
            frame += [0x80 | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        }
        frame += mask
        frame += payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
        try socket.send(bytes: frame)
    }

    /// The next message, parsed: one text frame, or the chunks a frame holding only their
    /// count announces, joined.
    private func message() throws -> JSONValue {
        let first = try textFrame()
        guard !first.isEmpty, first.count <= 4, first.allSatisfy({ (0x30...0x39).contains($0) }),
              let count = Int(String(decoding: first, as: UTF8.self)) else {
            return try JSONParser.parse(first)
        }
        var joined: [UInt8] = []
        for _ in 0..<count { joined += try textFrame() }
        return try JSONParser.parse(joined)
    }

    /// The payload of the next text frame (other frames skipped).
    private func textFrame() throws -> [UInt8] {
        guard let head = socket.read(count: 2) else { throw LiveClientError("the connection ended") }
        var length = Int(head[1] & 0x7F)
        if length == 126 {
            guard let bytes = socket.read(count: 2) else { throw LiveClientError("the connection ended") }
            length = Int(bytes[0]) << 8 | Int(bytes[1])
        } else if length == 127 {
            guard let bytes = socket.read(count: 8) else { throw LiveClientError("the connection ended") }
            length = bytes.reduce(0) { $0 << 8 | Int($1) }
        }
        guard let payload = socket.read(count: length) else { throw LiveClientError("the connection ended") }
        if head[0] & 0x0F != 1 { return try textFrame() }
        return payload
    }
}
