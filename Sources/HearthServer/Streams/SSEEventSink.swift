import HearthHTTP
import HearthJSON
import HearthStreams

/// A stream's typed events as server-sent events on its HTTP response (the SSE encoding;
/// `StreamContext.prepareBroadcast` encodes an event once for all the SSE sinks of a
/// location).
struct SSEEventSink: StreamEventSink {
    let stream: HTTPEventStream
    /// Where the stream listens (the profiler's `listen-broadcast` rows).
    let path: DataPath

    func deliver(_ event: StreamEvent, seq: Int64) { stream.send(StreamFrames.event(event, id: seq)) }
    func ended(_ verdict: StreamVerdict) { stream.finish(verdict.finalBytes) }
    func keepAlive() { stream.send(StreamFrames.keepAlive) }
}
