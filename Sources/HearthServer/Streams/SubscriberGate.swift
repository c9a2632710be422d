import HearthHTTP
import HearthRules
import HearthStreams

/// What the hub keeps about a stream's right to read: the caller, and what must be
/// re-checked about its credential over time (DESIGN.md §5 "access over time").
struct SubscriberGate: StreamGate {
    let caller: Caller
    /// For revocation checks; nil for admin and unauthenticated callers.
    let uid: String?
    let issuedAt: Int64?
    let expiresAt: Int64?
    /// The stream's query as the rules see it (`query.*`), for every later re-check.
    var query: RuleQuery? = nil
}

/// A stream's typed events as server-sent events on its HTTP response (the SSE encoding;
/// `StreamContext.broadcastEvents` encodes an event once for all the SSE sinks of a
/// location).
struct SSEEventSink: StreamEventSink {
    let stream: HTTPEventStream

    func deliver(_ event: StreamEvent, seq: Int64) { stream.send(StreamFrames.event(event, id: seq)) }
    func ended(_ verdict: StreamVerdict) { stream.finish(verdict.finalBytes) }
    func keepAlive() { stream.send(StreamFrames.keepAlive) }
}
