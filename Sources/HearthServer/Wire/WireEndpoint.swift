import HearthHTTP
import HearthJSON

/// `GET /.ws?v=5&ns=<namespace>`: the official SDKs' WebSocket (docs/protocol/wire.md §1),
/// over the core of the namespace the router picked (docs/namespaces.md); a name served
/// nowhere gets the protocol's shutdown (`refusal`). A plain GET without the upgrade gets a
/// clear 400.
enum WireEndpoint {
    static let path = "/.ws"

    /// A fresh session id: 128 random bits (the system generator: getrandom), hex. Not a
    /// push id, whose random part only increments within a millisecond: knowing a session
    /// id must not let anyone guess another, since `ls` ends the session it names.
    static func sessionID() -> WireSessionID {
        var generator = SystemRandomNumberGenerator()
        return WireSessionID(high: generator.next(), low: generator.next())
    }

    /// A query parameter's raw value (the SDKs do not percent-encode them,
    /// docs/protocol/wire.md §1.1).
    static func parameter(_ name: String, in query: String?) -> String? {
        guard let query else { return nil }
        for pair in query.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            if parts.count == 2, parts[0] == name { return String(parts[1]) }
        }
        return nil
    }

    static func handle(_ request: HTTPRequest, context: RESTContext, responder: HTTPResponder, refusal: String? = nil) {
        guard let wire = context.wire else {
            return responder.respond(APIError(404, "The wire protocol is not served here").response)
        }
        guard request.method == "GET" else { return responder.respond(APIError.methodNotAllowed(request.method).response) }
        // `s=`: a browser on long polling trying to move its session onto a WebSocket
        // (docs/protocol/wire.md §8). Not served: refused before the upgrade, so the SDK
        // drops that attempt and stays on `/.lp`, rather than sending on a socket bound to
        // no session.
        guard parameter("s", in: request.query) == nil else {
            return responder.respond(APIError(400, "Moving a long-poll session onto a WebSocket is not served; it stays on /.lp").response)
        }
        guard WebSocketHandshake.isUpgradeRequest(request) else {
            return responder.respond(APIError(400, "Expected a WebSocket upgrade: /.ws speaks the Firebase SDKs' wire protocol").response)
        }
        switch WebSocketHandshake.accept(request) {
        case .failure(let refusal):
            responder.respond(refusal.response)
        case .success(let head):
            // The host the client must use from now on: exactly the one it connected to
            // (iOS stores it, docs/protocol/wire.md §2.3).
            let host = request.headers["Host"] ?? "localhost"
            beginSession(request, wire: wire, refusal: refusal) {
                let session = WireSession(context: wire, host: host, address: request.remoteAddress, sessionID: sessionID(),
                                          refusal: $0, connectionQueue: responder.connectionQueue,
                                          directLocal: LocalOnlyCredentials.isDirectLocal(request))
                wire.sessions.add(session, id: session.sessionID)
                responder.upgrade(head, limits: WebSocketLimits(), handler: session)
            }
        }
    }

    /// What every transport (`/.ws`, `/.lp`) does before its session opens: decide whether
    /// the namespace is served (`open` gets the router's `refusal` or this check's, or nil), and end the session a
    /// reconnecting client names (`ls`) first, so its onDisconnect writes (say, presence
    /// "offline") come before the new session's.
    static func beginSession(_ request: HTTPRequest, wire: WireContext, refusal: String?,
                             open: @escaping @Sendable (_ refusal: String?) -> Void) {
        var refused = refusal
        if refused == nil, !wire.namespaces.isEmpty {
            let namespace = parameter("ns", in: request.query) ?? ""
            if !wire.namespaces.contains(namespace) {
                refused = "Namespace \"\(namespace.prefix(64))\" is not served here"
            }
        }
        let refusal = refused
        guard let previous = parameter("ls", in: request.query), let previousID = WireSessionID(hex: previous) else {
            return open(refusal)
        }
        if let old = wire.sessions.take(id: previousID) {
            old.endForReconnect { open(refusal) }
        } else {
            // Not on this node: on a shared engine it may live on another node (or one that
            // is gone). Its operations are claimed from the database and run here first.
            let ledger = wire.onDisconnect
            wire.work.async { ledger.runClaimed(session: previousID.description) { open(refusal) } }
        }
    }
}
