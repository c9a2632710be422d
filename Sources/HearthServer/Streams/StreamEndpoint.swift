import HearthHTTP
import HearthJSON
import HearthStreams

/// `GET <path>.json` with `Accept: text/event-stream` (docs/protocol/streaming.md §2,
/// docs/design.md §5).
///
/// Order matters for "no change lost, none duplicated": the stream registers with the hub
/// first, then one read transaction decides access and reads either the snapshot or the
/// change-log records a resuming client missed, together with the seq they are in sync
/// with; the hub then delivers only changes newer than that seq.
enum StreamEndpoint {
    /// Whether a GET asks for a stream: `Accept` names `text/event-stream`.
    static func wantsStream(_ request: HTTPRequest) -> Bool {
        guard let accept = request.headers["Accept"] else { return false }
        return accept.lowercased().contains("text/event-stream")
    }

    /// The response head: no caching, no proxy buffering (nginx honours
    /// `X-Accel-Buffering`), CORS for browsers' `EventSource`.
    static func head() -> HTTPResponse {
        var headers = JSONResponse.corsHeaders()
        headers.add("Content-Type", "text/event-stream; charset=utf-8")
        headers.add("Cache-Control", "no-cache")
        headers.add("X-Accel-Buffering", "no")
        return HTTPResponse(status: 200, headers: headers)
    }

    static func handle(
        _ request: RESTRequest, credential: Authenticator.Credential, context: RESTContext, responder: HTTPResponder
    ) {
        let hub = context.streams
        let query = request.options.query
        if let index = context.database.missingIndex(query, at: request.path) {
            return responder.respond(APIError.missingIndex(index, at: request.path).response)
        }
        let gate = SubscriberGate(
            caller: credential.caller, uid: credential.uid, issuedAt: credential.issuedAt, expiresAt: credential.expiresAt,
            query: query?.rules)
        let lastEventID = request.http.headers["Last-Event-ID"].flatMap { Int64(String($0.filter { $0 != " " })) }
        context.database.openListen(
            request.path, query: query, as: credential.caller, gate: gate, address: request.http.remoteAddress,
            hub: hub, resumeAfter: lastEventID, maxReplay: hub.options.maxReplayChanges,
            maxReplayBytes: hub.options.maxReplayBytes
        ) { result in
            switch result {
            case .failure(let error):
                responder.respond(context.response(for: error, during: .read).response)
            case .success(let read):
                // The first events are encoded here, on the reader that read them: not on
                // the connection's I/O queue, nor on the fan-out queue. What the stream keeps
                // (its close handler, as long as it is open) holds the listen without them.
                let frames = read.initial.map { StreamFrames.event($0.event, id: $0.seq) }
                let pending = read.withoutInitial
                let options = HTTPStreamOptions(
                    maxBufferedBytes: hub.options.maxQueuedBytes, overflowBytes: StreamFrames.cancel,
                    onClose: { pending.cancel() })
                responder.openStream(head(), options: options) { stream in
                    guard let stream else { return pending.cancel() }
                    pending.start(SSEEventSink(stream: stream, path: request.path),
                                  initial: PreparedEvents { for frame in frames { stream.send(frame) } })
                }
            }
        }
    }
}
