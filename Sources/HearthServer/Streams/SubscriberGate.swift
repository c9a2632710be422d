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

/// The HTTP layer's stream as the hub's sink.
struct HTTPStreamSink: StreamSink {
    let stream: HTTPEventStream

    func send(_ bytes: [UInt8]) { stream.send(bytes) }
    func finish(_ bytes: [UInt8]) { stream.finish(bytes) }
}
