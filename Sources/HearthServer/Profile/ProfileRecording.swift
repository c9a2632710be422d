import HearthHTTP
import HearthJSON
import HearthStreams
import HearthWire

/// The transports' hooks into their database's `Profiler` (docs/profiling.md says what
/// each kind counts). Every hook is reached only after `profiler.isRecording` said yes.
enum ProfileRecording {
    /// The kind a REST request counts as.
    static func kind(of request: RESTRequest) -> Profiler.Kind {
        switch request.method {
        case .get: return StreamEndpoint.wantsStream(request.http) ? .listen : .read
        case .put, .post, .delete: return .write
        case .patch: return .update
        }
    }

    /// `responder`, recording `request` when it answers: the time from here to the answer
    /// (a stream: to its head), the request's body and the answer's body. The path's
    /// pattern is found here, before the operation: a write answers on the single writer.
    static func recording(_ request: RESTRequest, in database: Database, _ responder: HTTPResponder) -> HTTPResponder {
        let (start, kind, path, bytesIn) = (Profiler.now, kind(of: request), request.path, request.http.body.count)
        let (profiler, pattern) = (database.profiler, database.profilePattern(of: request.path))
        return responder.transformingHeads { response in
            profiler.record(kind, pattern: pattern, at: path, nanoseconds: Profiler.since(start), bytesIn: bytesIn, bytesOut: response.body.count)
        }
    }

    /// The kind a wire-protocol request counts as; nil: not recorded.
    static func kind(ofWireAction action: String) -> Profiler.Kind? {
        switch action {
        case "q", "l": return .listen
        case "p": return .write
        case "m": return .update
        case "g": return .read
        case "auth", "gauth": return .auth
        default: return nil
        }
    }

    /// `StreamContext.prepareBroadcast`, also recording each event sent to each listener
    /// (`listen-broadcast`) while `profiler` records: its bytes as encoded for its
    /// transport, and the hand-off's time shared among the listeners.
    static func prepareBroadcast(recordingIn profiler: Profiler) -> PrepareBroadcast {
        { sinks in
            RecordedBroadcast(inner: StreamContext.prepareBroadcast(sinks), sinks: sinks,
                              location: sinks.lazy.compactMap(location(of:)).first, profiler: profiler)
        }
    }

    /// A prepared broadcast that records each event while the profiler records.
    private struct RecordedBroadcast: PreparedBroadcast {
        let inner: any PreparedBroadcast
        let sinks: [any StreamEventSink]
        let location: DataPath?
        let profiler: Profiler

        func send(_ event: StreamEvent, seq: Int64) {
            guard profiler.isRecording, let location else { return inner.send(event, seq: seq) }
            let start = Profiler.now
            inner.send(event, seq: seq)
            ProfileRecording.record(event, seq: seq, to: sinks, at: location, elapsed: Profiler.since(start), in: profiler)
        }
    }

    /// One `listen-broadcast` row: `event`'s bytes as each sink's transport encodes it.
    private static func record(_ event: StreamEvent, seq: Int64, to sinks: [any StreamEventSink], at location: DataPath,
                               elapsed: Int64, in profiler: Profiler) {
        var bytes = 0
        var sse: Int?
        var pushes: [Int64: Int] = [:]
        for sink in sinks {
            if sink is SSEEventSink {
                if sse == nil { sse = StreamFrames.event(event, id: seq).count }
                bytes += sse!
            } else if let listen = (sink as? WireListenSink) ?? (sink as? WireCompoundListenSink)?.listen {
                if pushes[listen.rawTag] == nil { pushes[listen.rawTag] = listen.push(event).count }
                bytes += pushes[listen.rawTag]!
            }
        }
        profiler.record(.listenBroadcast, at: location, nanoseconds: elapsed, bytesOut: bytes, count: sinks.count)
    }

    /// Where a sink listens (every sink of one broadcast listens at one location).
    private static func location(of sink: any StreamEventSink) -> DataPath? {
        if let sse = sink as? SSEEventSink { return sse.path }
        if let wire = sink as? WireListenSink { return wire.path }
        return (sink as? WireCompoundListenSink)?.listen.path
    }
}

/// The wire request being answered while the profiler records (a session answers one at
/// a time).
struct WireProfiling {
    let start: UInt64
    let kind: Profiler.Kind
    let path: DataPath?
    let bytesIn: Int

    /// Starts recording the request `action` with `body`, when the profiler records and the
    /// action is one it counts.
    init?(_ profiler: Profiler, action: String, body: JSONValue, bytesIn: Int) {
        guard profiler.isRecording, let kind = ProfileRecording.kind(ofWireAction: action) else { return nil }
        var path: DataPath? = nil
        if kind != .auth {
            guard case .string(let text)? = body.objectValue?["p"], let parsed = try? DataPath(string: text) else { return nil }
            path = parsed
        }
        (start, self.kind, self.path, self.bytesIn) = (Profiler.now, kind, path, bytesIn)
    }

    /// The request answered with `bytesOut`.
    func answered(_ profiler: Profiler, bytesOut: Int) {
        if let path {
            profiler.record(kind, at: path, nanoseconds: Profiler.since(start), bytesIn: bytesIn, bytesOut: bytesOut)
        } else {
            profiler.recordAuth(.wire, nanoseconds: Profiler.since(start), bytesIn: bytesIn, bytesOut: bytesOut)
        }
    }
}
