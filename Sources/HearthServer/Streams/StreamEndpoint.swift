import HearthHTTP
import HearthJSON
import HearthStore
import HearthStreams

/// `GET <path>.json` with `Accept: text/event-stream` (spec §2, DESIGN.md §5).
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

    /// What the read transaction found.
    enum Opening: Sendable {
        case denied
        case ready(initial: [UInt8], through: Int64, dependsOnData: Bool, resultTag: [UInt8]?)
    }

    static func handle(
        _ request: RESTRequest, credential: Authenticator.Credential, context: RESTContext, responder: HTTPResponder
    ) {
        let hub = context.streams
        let query = request.options.query
        let gate = SubscriberGate(
            caller: credential.caller, uid: credential.uid, issuedAt: credential.issuedAt, expiresAt: credential.expiresAt,
            query: query?.rules)
        if let query, let index = query.requiredIndex, !context.policy.indexes(at: request.path).contains(index) {
            return responder.respond(query.missingIndexError(at: request.path).response)
        }
        let refresh: QueryRefresh? = query.map { query in
            let (store, path) = (context.store, request.path)
            return { completion in
                store.read({ view in try queryResult(query, at: path, view: view) }, completion: { completion(try? $0.get()) })
            }
        }
        let subscription: Subscription
        do {
            subscription = try hub.register(location: request.path, gate: gate, address: request.http.remoteAddress, refresh: refresh)
        } catch {
            switch error {
            case .tooManyStreams: return responder.respond(APIError(503, "Too many open streams; try again later").response)
            case .tooManyStreamsFromAddress:
                return responder.respond(APIError(429, "Too many open streams from this address").response)
            }
        }
        let lastEventID = request.http.headers["Last-Event-ID"].flatMap { Int64(String($0.filter { $0 != " " })) }
        let policy = context.policy
        let maxReplay = hub.options.maxReplayChanges
        let path = request.path
        context.store.read({ view -> Opening in
            var dependsOnData = false
            if !credential.caller.isAdmin {
                let access = policy.readAccess(path, query: query?.rules, caller: credential.caller, view: view)
                guard access.allowed else { return .denied }
                dependsOnData = access.dependsOnDataOrTime
            }
            if let query {
                // A query stream always starts from the query's result (no replay).
                let result = try queryResult(query, at: path, view: view)
                let event = StreamEvent(name: .put, path: "/", data: result.value)
                return .ready(initial: StreamFrames.event(event, id: result.seq), through: result.seq,
                              dependsOnData: dependsOnData, resultTag: result.tag)
            }
            let seq = try view.lastChangeSeq()
            if let lastEventID, let replay = try replay(at: path, after: lastEventID, through: seq, limit: maxReplay, view: view) {
                return .ready(initial: replay, through: seq, dependsOnData: dependsOnData, resultTag: nil)
            }
            let snapshot = StreamEvent(name: .put, path: "/", data: FirebaseTree.render(try view.value(at: path)))
            return .ready(initial: StreamFrames.event(snapshot, id: seq), through: seq, dependsOnData: dependsOnData, resultTag: nil)
        }, completion: { result in
            switch result {
            case .success(.denied):
                hub.remove(subscription)
                responder.respond(APIError.permissionDenied.response)
            case .failure(let error):
                hub.remove(subscription)
                responder.respond(context.response(for: error).response)
            case .success(.ready(let initial, let seq, let dependsOnData, let resultTag)):
                hub.setDependsOnData(subscription, dependsOnData)
                let options = HTTPStreamOptions(
                    maxBufferedBytes: hub.options.maxQueuedBytes, overflowBytes: StreamFrames.cancel,
                    onClose: { hub.remove(subscription) })
                responder.openStream(head(), options: options) { stream in
                    guard let stream else { return hub.remove(subscription) }
                    hub.start(subscription, sink: HTTPStreamSink(stream: stream), initial: initial, through: seq, resultTag: resultTag)
                }
            }
        })
    }

    /// A query's result on `view`, in client form, with its tag and the seq it is in sync with.
    static func queryResult(_ query: QueryParameters, at path: DataPath, view: any TreeView) throws -> QueryResult {
        let stored = try view.query(query.tree, at: path)
        return QueryResult(value: FirebaseTree.render(stored), tag: Array(ETag.of(stored).utf8), seq: try view.lastChangeSeq())
    }

    /// The events a client that saw everything up to `lastEventID` missed, when the log
    /// still holds all of them and they are at most `limit`; nil when a fresh snapshot is
    /// needed instead (log trimmed, too many, or an id from the future, e.g. after a restore).
    static func replay(at path: DataPath, after lastEventID: Int64, through seq: Int64, limit: Int, view: any TreeView) throws -> [UInt8]? {
        guard lastEventID >= 0, lastEventID <= seq else { return nil }
        if lastEventID == seq { return [] }
        let (changes, oldest) = try view.changes(after: lastEventID, limit: limit + 1)
        guard let oldest, oldest <= lastEventID + 1, changes.count <= limit, changes.last?.seq == seq else { return nil }
        var out: [UInt8] = []
        for change in changes {
            if let event = StreamEvent.of(StreamChange(change), at: path) {
                StreamFrames.append(event: event, id: change.seq, to: &out)
            }
        }
        return out
    }
}

extension StreamChange {
    init(_ change: Change) {
        self.init(seq: change.seq, path: change.path, kind: change.kind == .put ? .put : .patch,
                  data: change.data, unchangedBelow: change.unchangedBelow)
    }
}
