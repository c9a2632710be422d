/// Why a client's frame could not be taken as a wire-protocol message. Each is answered by
/// ending the session (the stream of messages can no longer be trusted): the session
/// closes with `WebSocketCloseCode.protocolError` or, for size, `messageTooBig`.
public enum WireError: Error, Sendable, Equatable {
    /// Not JSON, not an object, or without the `t`/`d` envelope (spec §2.2).
    case malformedMessage
    /// A chunk count of 0 is the keep-alive; a count above `WireLimits.maxChunks`, or one
    /// announced while another message's chunks are still arriving, is refused.
    case invalidChunkCount
    /// A message past `WireLimits.maxMessageBytes` once its chunks are joined.
    case messageTooBig
}
