import HearthHTTP
import HearthWire

/// `GET /.lp`: the JS SDK's long-polling transport (docs/protocol/wire.md §8), for browsers
/// whose WebSocket failed (a proxy that refuses the upgrade). The same `WireSession` as
/// `/.ws` behind a `LongPollChannel`. Every request is a `<script>` load:
///
/// * `start=t&ser=…&cb=<digits>&v=5[&ls=…][&ns=…]`: a new session; answered with
///   `pLPCommand<cb>('start', id, pw)` and the handshake.
/// * `id=…&pw=…&ser=…[&seg<i>=…&ts<i>=…&d<i>=…]`: a poll, maybe carrying segments of the
///   client's messages.
/// * `dframe=t&id=…&pw=…`: the SDK's hidden disconnect frame, loaded once at start: a page
///   that calls `disconn=t&id=…&pw=…` when it goes away, which ends the session.
enum LongPollEndpoint {
    static let path = "/.lp"

    static func handle(_ request: HTTPRequest, context: RESTContext, responder: HTTPResponder, refusal: String? = nil) {
        guard let wire = context.wire else {
            return responder.respond(APIError(404, "The wire protocol is not served here").response)
        }
        guard request.method == "GET" else { return responder.respond(APIError.methodNotAllowed(request.method).response) }
        let parameters = Self.parameters(request.query)
        if parameters["start"] != nil { return start(request, parameters, wire: wire, refusal: refusal, responder: responder) }
        guard let id = parameters["id"], let password = parameters["pw"] else {
            return responder.respond(APIError(400, "Expected start=t, or a poll with the id and pw of an open session: /.lp is the SDKs' long-polling transport").response)
        }
        guard let channel = wire.longPolls.find(id: id), channel.admits(password: password) else {
            return responder.respond(APIError(404, "No such long-poll session; start a new one").response)
        }
        if parameters["dframe"] != nil {
            var headers = HTTPHeaders()
            headers.add("Content-Type", "text/html; charset=utf-8")
            headers.add("Cache-Control", "no-cache, no-store")
            return responder.respond(HTTPResponse(status: 200, headers: headers,
                                                  body: LongPollScript.disconnectFrame(path: path, id: channel.id, password: channel.password)))
        }
        if parameters["disconn"] != nil {
            channel.disconnect()
            return responder.respond(LongPollChannel.script([]))
        }
        let segments: [LongPollSegments.Segment]
        do {
            segments = try LongPollSegments.parse(parameters)
        } catch {
            return responder.respond(APIError(400, "Malformed segment: each seg<i> needs a number, ts<i> and d<i>").response)
        }
        channel.poll(segments, responder: responder)
    }

    private static func start(_ request: HTTPRequest, _ parameters: [Substring: Substring], wire: WireContext, refusal: String?,
                              responder: HTTPResponder) {
        guard let callback = parameters["cb"], LongPollScript.isCallbackID(callback) else {
            return responder.respond(APIError(400, "A long poll's start needs cb, its callback id (digits)").response)
        }
        let registry = wire.longPolls
        let host = request.headers["Host"] ?? "localhost"
        WireEndpoint.beginSession(request, wire: wire, refusal: refusal) { refusal in
            let session = WireSession(context: wire, host: host, address: request.remoteAddress, sessionID: WireEndpoint.sessionID(),
                                      refusal: refusal, directLocal: LocalOnlyCredentials.isDirectLocal(request))
            let channel = LongPollChannel(session: session, id: WireEndpoint.sessionID().description,
                                          password: WireEndpoint.sessionID().description, callback: String(callback),
                                          address: request.remoteAddress, limits: registry.limits, registry: registry,
                                          logger: wire.logger)
            do throws(LongPollRegistry.Refusal) {
                try registry.add(channel)
            } catch {
                // Any status but 2xx fails the SDK's script load: it closes the transport
                // and reconnects with back-off.
                return responder.respond(error.apiError(registry.limits).response)
            }
            wire.sessions.add(session, id: session.sessionID)
            channel.start(responder)
        }
    }

    /// The query's parameters, raw (the SDK does not percent-encode them; base64 segments
    /// keep their `-`, `_` and `.`). The first of a repeated name wins.
    static func parameters(_ query: String?) -> [Substring: Substring] {
        var result: [Substring: Substring] = [:]
        guard let query else { return result }
        for pair in query.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            if result[parts[0]] == nil { result[parts[0]] = parts.count == 2 ? parts[1] : "" }
        }
        return result
    }
}

extension LongPollRegistry.Refusal {
    /// 503 when the server has `maxSessions`; 429 when the client's address has
    /// `maxSessionsPerAddress` (as a connection past `maxConnectionsPerAddress` gets).
    func apiError(_ limits: LongPollLimits) -> APIError {
        switch self {
        case .serverFull:
            APIError(503, "Too many long-poll sessions on this server (\(limits.maxSessions)); try again later",
                     headers: [("Retry-After", "5")])
        case .addressFull:
            APIError(429, "Too many long-poll sessions from this address (\(limits.maxSessionsPerAddress)); close one or try again later",
                     headers: [("Retry-After", "5")])
        }
    }
}
