import HearthHTTP
import HearthStreams

/// The stream side of the server, shared by the endpoints.
struct StreamContext: Sendable {
    let hub: StreamHub

    /// Sends one event to many HTTP streams with one hop per I/O queue.
    static let broadcast: @Sendable ([UInt8], [any StreamSink]) -> Void = { bytes, sinks in
        var streams: [HTTPEventStream] = []
        streams.reserveCapacity(sinks.count)
        for sink in sinks {
            if let http = sink as? HTTPStreamSink { streams.append(http.stream) } else { sink.send(bytes) }
        }
        HTTPEventStream.broadcast(bytes, to: streams)
    }
}
