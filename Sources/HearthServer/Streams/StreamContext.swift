import HearthHTTP
import HearthStreams
import HearthWire

/// The stream side of the server, shared by the endpoints.
struct StreamContext: Sendable {
    let hub: StreamHub

    /// Hands one event to the typed sinks of one location, encoding it once per transport:
    /// as SSE for all the HTTP streams among them, and as one wire-protocol push per
    /// distinct tag for the wire listens (untagged listens of one location share theirs).
    /// Either way the sends take one hop per I/O queue.
    static let broadcastEvents: @Sendable (StreamEvent, Int64, [any StreamEventSink]) -> Void = { event, seq, sinks in
        var streams: [HTTPEventStream] = []
        var wire: [WireListenSink.PushKey: (sink: WireListenSink, sessions: [WebSocketSession])] = [:]
        for sink in sinks {
            if let sse = sink as? SSEEventSink {
                streams.append(sse.stream)
            } else if let listen = sink as? WireListenSink {
                guard let channel = listen.pushSession else { continue }
                if let session = channel as? WebSocketSession {
                    wire[listen.pushKey, default: (listen, [])].sessions.append(session)
                } else {
                    channel.send(message: listen.push(event))  // a long poll: queued per session
                }
            } else {
                sink.deliver(event, seq: seq)
            }
        }
        if !streams.isEmpty { HTTPEventStream.broadcast(StreamFrames.event(event, id: seq), to: streams) }
        for (_, group) in wire {
            WebSocketSession.broadcast(texts: WireOutbound.frames(group.sink.push(event)), to: group.sessions)
        }
    }
}
