// What the load generator sends, byte for byte what scripts/bench/wire.py and harness.py
// send (header order included), so the server sees the same requests from either client.

enum Requests {
    /// The WebSocket upgrade of wire.py's WSClient.
    static func upgrade(host: String, port: Int, namespace: String, key: String) -> [UInt8] {
        Array(("GET /.ws?v=5&ns=\(namespace) HTTP/1.1\r\nHost: \(host):\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               + "Sec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\nUser-Agent: hearth-bench-wire\r\n\r\n").utf8)
    }

    /// The SSE stream request of harness.py's build_raw for targets/hearth.json's sse.connect.
    static func stream(host: String, port: Int, path: String, token: String) -> [UInt8] {
        Array(("GET \(path).json HTTP/1.1\r\nHost: \(host):\(port)\r\nAuthorization: Bearer \(token)\r\n"
               + "Accept: text/event-stream\r\n\r\n").utf8)
    }

    /// wire.py's request(): `{"t":"d","d":{"r":N,"a":ACTION,"b":BODY}}` (BODY already JSON).
    static func wireRequest(number: Int, action: String, body: String) -> [UInt8] {
        Array(#"{"t":"d","d":{"r":\#(number),"a":"\#(action)","b":\#(body)}}"#.utf8)
    }

    static func auth(token: String) -> [UInt8] {
        wireRequest(number: 1, action: "auth", body: #"{"cred":"\#(token)"}"#)
    }

    static func listen(path: String) -> [UInt8] {
        wireRequest(number: 2, action: "q", body: #"{"p":"\#(path)","h":""}"#)
    }

    /// targets/hearth.json's sse.write body with `${marker}` = `<prefix><seq>.`.
    static func favourite(seq: Int, marker: String, uid: String, nowMilliseconds: Int64) -> [UInt8] {
        Array((#"{"id":"live-\#(seq)","name":"Live \#(seq)","note":"\#(marker)","createdAt":\#(nowMilliseconds),"#
               + #""createdBy":"\#(uid)","latitude":48.8566,"longitude":2.3522}"#).utf8)
    }

    /// A write as build_raw renders it: POST (a new child) or PUT (one path), Bearer token.
    static func write(method: String, host: String, port: Int, path: String, token: String, body: [UInt8]) -> [UInt8] {
        Array(("\(method) \(path).json HTTP/1.1\r\nHost: \(host):\(port)\r\nAuthorization: Bearer \(token)\r\n"
               + "Content-Type: application/json\r\nContent-Length: \(body.count)\r\n\r\n").utf8) + body
    }

    /// A path template with `${uid}` and `${i}` filled in (wire.py's path_for).
    static func path(_ template: String, uid: String, name: String) -> String {
        template.replacing("${uid}", with: uid).replacing("${i}", with: name)
    }
}

/// A masked client frame (RFC 6455 §5.3: a client masks every frame). The key comes from a
/// cheap generator: masking is not a secret here, only the protocol's rule.
struct FrameMasker {
    private var state: UInt64

    init(seed: UInt64) { state = seed | 1 }

    mutating func nextKey() -> UInt32 {
        // xorshift64*
        state ^= state >> 12
        state ^= state << 25
        state ^= state >> 27
        return UInt32(truncatingIfNeeded: (state &* 0x2545_F491_4F6C_DD1D) >> 32)
    }

    /// One final frame with `opcode` carrying `payload`, masked.
    mutating func frame(opcode: UInt8, _ payload: [UInt8]) -> [UInt8] {
        var out = FrameHead.encode(opcode: opcode, length: payload.count, masked: true)
        out.reserveCapacity(out.count + 4 + payload.count)
        let key = nextKey()
        let keyBytes = [UInt8(key >> 24), UInt8((key >> 16) & 0xFF), UInt8((key >> 8) & 0xFF), UInt8(key & 0xFF)]
        out.append(contentsOf: keyBytes)
        for (index, byte) in payload.enumerated() { out.append(byte ^ keyBytes[index & 3]) }
        return out
    }

    /// A Sec-WebSocket-Key: 16 bytes in base64.
    mutating func webSocketKey() -> String {
        var bytes: [UInt8] = []
        for _ in 0..<4 {
            let value = nextKey()
            bytes += [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)]
        }
        return base64(bytes)
    }
}

func base64(_ bytes: [UInt8]) -> String {
    let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    var out: [UInt8] = []
    var index = 0
    while index < bytes.count {
        let chunk = bytes[index..<min(index + 3, bytes.count)]
        var value = 0
        for byte in chunk { value = value << 8 | Int(byte) }
        value <<= 8 * (3 - chunk.count)
        for position in 0..<4 {
            out.append(position <= chunk.count ? alphabet[(value >> (18 - 6 * position)) & 0x3F] : UInt8(ascii: "="))
        }
        index += 3
    }
    return String(decoding: out, as: UTF8.self)
}
