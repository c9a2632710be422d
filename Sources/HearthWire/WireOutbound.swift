import HearthJSON

/// What the server sends (docs/protocol/wire.md §2.3, §3.1, §3.3), each as one text frame:
/// a JSON object, so never the short numeric or empty frame a client would take as a chunk
/// count (§2.1).
public enum WireOutbound: Sendable, Equatable {
    /// The handshake, first message of every connection: server time (epoch ms), the host
    /// the client must use from now on (exactly what it connected to), the session id.
    case handshake(timestamp: Int64, host: String, sessionID: String)
    /// The answer to a control `p`.
    case pong
    /// Control `s`: the client closes and never reconnects. Fatal conditions only.
    case shutdown(reason: String)
    /// The response to request `number`: `status` is "ok" or a Firebase status string;
    /// `data` must be a non-empty string on failure (docs/protocol/wire.md §3.1).
    case response(number: Int64, status: String, data: JSONValue)
    /// A push (`d`, `m`, `c`, `ac`) with its body.
    case push(action: String, body: JSONValue)

    public static let protocolVersion = "5"

    public var json: JSONValue {
        switch self {
        case .handshake(let timestamp, let host, let sessionID):
            return Self.control("h", .object(["ts": .int(timestamp), "v": .string(Self.protocolVersion),
                                              "h": .string(host), "s": .string(sessionID)]))
        case .pong:
            return Self.control("o", .null)
        case .shutdown(let reason):
            return Self.control("s", .string(reason))
        case .response(let number, let status, let data):
            return .object(["t": "d", "d": .object(["r": .int(number), "b": .object(["s": .string(status), "d": data])])])
        case .push(let action, let body):
            return .object(["t": "d", "d": .object(["a": .string(action), "b": body])])
        }
    }

    /// The frame's text (UTF-8).
    public var bytes: [UInt8] { JSONWriter.write(json) }

    /// Bytes per chunk when a message is split (docs/protocol/wire.md §2.1: the SDKs cut at
    /// 16,384).
    public static let chunkBytes = 16_384
    /// Most chunks of one message (iOS takes a count of at most 4 digits).
    public static let maxChunks = 9_999

    /// The text frames that carry `message` (docs/protocol/wire.md §2.1): the message
    /// itself when it is at most `chunkBytes` long; else a frame holding the number of
    /// chunks, then the chunks, each cut at a UTF-8 character boundary (every text frame
    /// must be valid UTF-8) and at most `chunkBytes` long. A message that would need more
    /// than `maxChunks` goes whole.
    public static func frames(_ message: [UInt8], chunkBytes: Int = WireOutbound.chunkBytes) -> [[UInt8]] {
        guard message.count > chunkBytes, chunkBytes >= 4 else { return [message] }
        var chunks: [[UInt8]] = []
        var start = 0
        while start < message.count {
            var end = min(start + chunkBytes, message.count)
            // Back up over continuation bytes (10xxxxxx) so no character is split.
            while end < message.count && end > start && message[end] & 0xC0 == 0x80 { end -= 1 }
            chunks.append(Array(message[start..<end]))
            start = end
            if chunks.count > maxChunks { return [message] }
        }
        return [Array(String(chunks.count).utf8)] + chunks
    }

    private static func control(_ type: String, _ payload: JSONValue) -> JSONValue {
        // `d` is always present: a control message without it is ignored by the SDK (§2.2).
        .object(["t": "c", "d": .object(["t": .string(type), "d": payload])])
    }
}
