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
        // Every sink here listens at the one location of the event (the hub's contract),
        // so a listen's push depends only on its tag: untagged listens share one, and each
        // tag gets its own. The group of the previous listen is tried first, so the
        // per-listen cost is an integer comparison, not a hash.
        var groups: [(tag: Int64, sink: WireListenSink, sessions: [WebSocketSession])] = []
        var index: [Int64: Int] = [:]
        var last = -1
        for sink in sinks {
            if let listen = sink as? WireListenSink {
                guard let channel = listen.pushSession else { continue }
                guard let session = channel as? WebSocketSession else {
                    channel.send(message: listen.push(event))  // a long poll: queued per session
                    continue
                }
                let tag = listen.rawTag
                if last < 0 || groups[last].tag != tag {
                    if let known = index[tag] {
                        last = known
                    } else {
                        last = groups.count
                        index[tag] = last
                        groups.append((tag, listen, []))
                        if last == 0 { groups[0].sessions.reserveCapacity(sinks.count) }
                    }
                }
                groups[last].sessions.append(session)
            } else if let sse = sink as? SSEEventSink {
                if streams.isEmpty { streams.reserveCapacity(sinks.count) }
                streams.append(sse.stream)
            } else {
                sink.deliver(event, seq: seq)
            }
        }
        if !streams.isEmpty { HTTPEventStream.broadcast(StreamFrames.event(event, id: seq), to: streams) }
        for group in groups {
            WebSocketSession.broadcast(texts: WireOutbound.frames(group.sink.push(event)), to: group.sessions)
        }
    }

    /// `broadcastEvents`' sorting done once for the live sinks of one location: the SSE
    /// streams as one group, the wire listens as one group per tag (each with its own
    /// push), both sorted by I/O loop; long polls and other sinks one by one.
    static let prepareBroadcast: PrepareBroadcast = { sinks in
        var streams: [HTTPEventStream] = []
        var tagged: [(tag: Int64, sink: WireListenSink, sessions: [WebSocketSession])] = []
        var longPolls: [WireListenSink] = []
        var others: [any StreamEventSink] = []
        for sink in sinks {
            if let listen = sink as? WireListenSink {
                guard let channel = listen.pushSession else { continue }
                guard let session = channel as? WebSocketSession else {
                    longPolls.append(listen)
                    continue
                }
                if let known = tagged.lastIndex(where: { $0.tag == listen.rawTag }) {
                    tagged[known].sessions.append(session)
                } else {
                    tagged.append((listen.rawTag, listen, [session]))
                }
            } else if let sse = sink as? SSEEventSink {
                streams.append(sse.stream)
            } else {
                others.append(sink)
            }
        }
        return PreparedStreams(sse: streams.isEmpty ? nil : .streams(streams),
                               wire: tagged.map { ($0.sink, .sessions($0.sessions)) },
                               longPolls: longPolls, others: others)
    }
}

/// The live sinks of one location, sorted by `StreamContext.prepareBroadcast`.
struct PreparedStreams: PreparedBroadcast {
    let sse: HTTPBroadcastGroup?
    /// One group per tag, with a listen of that tag to encode its push.
    let wire: [(sink: WireListenSink, group: HTTPBroadcastGroup)]
    let longPolls: [WireListenSink]
    let others: [any StreamEventSink]

    func send(_ event: StreamEvent, seq: Int64) {
        sse?.send([StreamFrames.event(event, id: seq)])
        for (sink, group) in wire { group.send(WireOutbound.frames(sink.push(event))) }
        for listen in longPolls { listen.pushSession?.send(message: listen.push(event)) }
        for sink in others { sink.deliver(event, seq: seq) }
    }
}
