import HearthHTTP
import HearthStreams

/// The stream side of the server, shared by the endpoints.
struct StreamContext: Sendable {
    let hub: StreamHub

    /// Hands one event to the typed sinks of one location: encoded once as SSE for all the
    /// HTTP streams among them (one hop per I/O queue), delivered to the others (the wire
    /// protocol's sessions encode their own).
    static let broadcastEvents: @Sendable (StreamEvent, Int64, [any StreamEventSink]) -> Void = { event, seq, sinks in
        var streams: [HTTPEventStream] = []
        streams.reserveCapacity(sinks.count)
        for sink in sinks {
            if let sse = sink as? SSEEventSink { streams.append(sse.stream) } else { sink.deliver(event, seq: seq) }
        }
        if !streams.isEmpty { HTTPEventStream.broadcast(StreamFrames.event(event, id: seq), to: streams) }
    }
}
