import HearthHTTP
import HearthJSON

/// `GET /.ws?v=5&ns=<namespace>`: the official SDKs' WebSocket (wire spec §1), over the
/// core of the namespace the router picked (issue 28; docs/namespaces.md); a name served
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

    /// A query parameter's raw value (the SDKs do not percent-encode them, spec §1.1).
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
        guard WebSocketHandshake.isUpgradeRequest(request) else {
            return responder.respond(APIError(400, "Expected a WebSocket upgrade: /.ws speaks the Firebase SDKs' wire protocol").response)
        }
        switch WebSocketHandshake.accept(request) {
        case .failure(let refusal):
            responder.respond(refusal.response)
        case .success(let head):
            // The host the client must use from now on: exactly the one it connected to
            // (iOS stores it, spec §2.3).
            let host = request.headers["Host"] ?? "localhost"
            let id = sessionID()
            var refused = refusal
            if refused == nil, !wire.namespaces.isEmpty {
                let namespace = parameter("ns", in: request.query) ?? ""
                if !wire.namespaces.contains(namespace) {
                    refused = "Namespace \"\(namespace.prefix(64))\" is not served here"
                }
            }
            let refusal = refused
            let upgrade: @Sendable () -> Void = {
                let session = WireSession(context: wire, host: host, address: request.remoteAddress, sessionID: id,
                                          refusal: refusal, connectionQueue: responder.connectionQueue,
                                          directLocal: LocalOnlyCredentials.isDirectLocal(request))
                wire.sessions.add(session, id: id)
                responder.upgrade(head, limits: WebSocketLimits(), handler: session)
            }
            // A reconnecting client names its previous session (`ls`): end it first, so its
            // onDisconnect writes (say, presence "offline") come before this session's.
            if let previous = parameter("ls", in: request.query), let previousID = WireSessionID(hex: previous),
               let old = wire.sessions.take(id: previousID) {
                old.endForReconnect(then: upgrade)
            } else {
                upgrade()
            }
        }
    }
}
