import HearthHTTP
import HearthStreams
import HearthWire

/// The stream side of the server, shared by the endpoints.
struct StreamContext: Sendable {
    let hub: StreamHub

    /// Sorts the sinks of one location for their transports, so that each event is encoded
    /// once per transport: the SSE streams as one group; the wire listens as one group per
    /// distinct tag, each with its own push (untagged listens of one location share
    /// theirs); both sorted by I/O loop, so a send takes one hop per loop. Long polls and
    /// other sinks get each event one by one. The hub keeps the result for a location whose
    /// listeners are all live (a steady group) and sorts afresh for each event otherwise.
    static let prepareBroadcast: PrepareBroadcast = { sinks in
        var streams: [HTTPEventStream] = []
        var tagged: [(sink: WireListenSink, sessions: [WebSocketSession])] = []
        // Every sink here listens at the one location (the hub's contract), so a listen's
        // push depends only on its tag. The previous listen's group is tried first, then
        // the index: linear in the sinks however many distinct tags they carry.
        var index: [Int64: Int] = [:]
        var last = -1
        var longPolls: [WireListenSink] = []
        var others: [any StreamEventSink] = []
        for sink in sinks {
            if let listen = sink as? WireListenSink {
                guard let channel = listen.pushSession else { continue }
                guard let session = channel as? WebSocketSession else {
                    longPolls.append(listen)
                    continue
                }
                let tag = listen.rawTag
                if last < 0 || tagged[last].sink.rawTag != tag {
                    if let known = index[tag] {
                        last = known
                    } else {
                        last = tagged.count
                        index[tag] = last
                        tagged.append((listen, []))
                        if last == 0 { tagged[0].sessions.reserveCapacity(sinks.count) }
                    }
                }
                tagged[last].sessions.append(session)
            } else if let sse = sink as? SSEEventSink {
                if streams.isEmpty { streams.reserveCapacity(sinks.count) }
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
