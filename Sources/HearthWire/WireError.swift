import HearthJSON

/// Why a client's frame could not be taken as a wire-protocol message. The chunk errors
/// end the session (the stream of messages can no longer be trusted); a message that does
/// not decode is answered when its request number can be found, and counts as a bad
/// message.
public enum WireError: Error, Sendable, Equatable {
    /// Not JSON, not an object, or without the `t`/`d` envelope (docs/protocol/wire.md
    /// §2.2).
    case malformedMessage
    /// JSON nested deeper than `JSONParser.maxNesting`: the message is refused without
    /// being decoded. `number` is its request's `r`, found by a scan of the envelope
    /// (`WireInbound.requestNumber(in:)`), so the client is answered rather than left
    /// waiting.
    case nestingTooDeep(number: Int64?)
    /// A chunk count above `WireLimits.maxChunks`: more chunks than a message within
    /// `WireLimits.maxMessageBytes` needs (a count of 0 is the keep-alive).
    case invalidChunkCount
    /// A message past `WireLimits.maxMessageBytes` once its chunks are joined.
    case messageTooBig

    /// What the client is told, in words it can act on (a close reason, at most 123
    /// bytes, or an answer's text); never the client's bytes.
    public func reason(_ limits: WireLimits) -> String {
        switch self {
        case .malformedMessage:
            return "Not a wire-protocol message: expected a JSON object with t and d"
        case .nestingTooDeep:
            return "Data nested deeper than \(JSONParser.maxNesting) levels"
        case .invalidChunkCount:
            return "Message announced in more than \(limits.maxChunks) chunks; it cannot fit \(Self.size(limits.maxMessageBytes))"
        case .messageTooBig:
            return "Message larger than \(Self.size(limits.maxMessageBytes)); write less at once"
        }
    }

    /// `16 MiB`, `64 KiB` or `10 bytes`.
    static func size(_ bytes: Int) -> String {
        if bytes >= 1 << 20 && bytes % (1 << 20) == 0 { return "\(bytes >> 20) MiB" }
        if bytes >= 1 << 10 && bytes % (1 << 10) == 0 { return "\(bytes >> 10) KiB" }
        return "\(bytes) bytes"
    }
}
