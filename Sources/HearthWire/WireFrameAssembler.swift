/// Joins a client's chunked messages (docs/protocol/wire.md §2.1): a frame holding only a
/// decimal number N announces that the next N frames are one message; a frame holding
/// exactly `0` is the client's keep-alive and is not a message; any other frame is one
/// whole message.
public struct WireFrameAssembler: Sendable {
    public enum Output: Sendable, Equatable {
        /// A whole message's bytes.
        case message([UInt8])
        /// The keep-alive `0`.
        case keepAlive
        /// A chunk count or a chunk: more frames are needed.
        case needMore
    }

    public let limits: WireLimits
    private var expected = 0
    private var chunks: [UInt8] = []

    public init(limits: WireLimits) {
        self.limits = limits
    }

    /// Longest text taken as a chunk count (JS takes up to 6 characters, iOS 4).
    static let maxCountDigits = 6

    /// Memory held for the message being joined (its chunks so far, as allocated):
    /// incomplete input the server counts against its bounds (`WebSocketSession.holding`).
    public var heldByteCount: Int { chunks.isEmpty ? 0 : chunks.capacity }

    public mutating func take(_ frame: [UInt8]) throws(WireError) -> Output {
        if expected > 0 {
            guard chunks.count + frame.count <= limits.maxMessageBytes else { throw .messageTooBig }
            chunks.append(contentsOf: frame)
            expected -= 1
            guard expected == 0 else { return .needMore }
            let whole = chunks
            chunks = []
            return .message(whole)
        }
        if let count = Self.chunkCount(frame) {
            if count == 0 { return .keepAlive }
            guard count <= limits.maxChunks else { throw .invalidChunkCount }
            expected = count
            return .needMore
        }
        guard frame.count <= limits.maxMessageBytes else { throw .messageTooBig }
        return .message(frame)
    }

    /// The frame's value when it is only ASCII digits (at most `maxCountDigits`).
    static func chunkCount(_ frame: [UInt8]) -> Int? {
        guard !frame.isEmpty, frame.count <= maxCountDigits else { return nil }
        var value = 0
        for byte in frame {
            guard byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return value
    }
}
