import HearthDatabase
import HearthHTTP

/// `GET /healthz`: the process is up and serving HTTP. `GET /readyz`: every namespace's
/// store takes writes (a write transaction opens on the writer, and space has come back
/// after writes were refused for lack of it), so a load balancer can route here; 503 with
/// the reason and the namespace that is not ready.
enum HealthEndpoint {
    /// Served even to a client address past its connection cap
    /// (`HTTPServerConfiguration.uncappedPaths`): a load balancer behind the same address
    /// as the clients must still learn the server is up.
    static let paths: Set<String> = ["/healthz", "/readyz"]

    static func healthz(responder: HTTPResponder) {
        responder.respond(JSONResponse.make(.object(["status": .string("ok")]), options: QueryOptions.defaults))
    }

    /// Ready when every open database is: each namespace's store is asked in turn (the
    /// default first); the first that is not ready answers, named in the body's
    /// `namespace` (absent for the default namespace).
    static func readyz(databases: [(name: String, context: RESTContext)], responder: HTTPResponder) {
        guard let (name, context) = databases.first else {
            return responder.respond(JSONResponse.make(.object(["status": .string("ready")]), options: QueryOptions.defaults))
        }
        let rest = Array(databases.dropFirst())
        context.database.checkWritable { result in
            switch result {
            case .success:
                readyz(databases: rest, responder: responder)
            case .failure(let notReady) where notReady.reason == .storageFull:
                // The storage observer has logged what to do.
                // The store's own text names the data directory: that stays in the log.
                var answer = APIError(503, "Not ready: the data volume is full, writes are refused until space is freed",
                                      detail: "less than \(NotReady.reserveBytes) bytes free beside the reserve")
                answer.namespace = name.isEmpty ? nil : name
                responder.respond(answer.response)
            case .failure(let failure):
                // A balancer asks every few seconds: an unreachable database is logged once
                // per outage (StoreOutageLog), not once per probe.
                let shown = name.isEmpty ? "" : " (namespace \(name))"
                if failure.isOutage {
                    context.logger.debug("readiness check failed\(shown): \(failure.detail)")
                } else {
                    context.logger.warning("readiness check failed\(shown): \(failure.detail)")
                }
                var answer = Self.notReady(failure)
                answer.namespace = name.isEmpty ? nil : name
                responder.respond(answer.response)
            }
        }
    }

    /// The 503 of a readiness check that failed for another reason than a full volume: why,
    /// in the terms of docs/api.md and docs/scaling.md (the store's own text stays in the log).
    static func notReady(_ error: any Error) -> APIError {
        notReady(error as? NotReady ?? NotReady(error))
    }

    static func notReady(_ notReady: NotReady) -> APIError {
        let reason: String
        switch notReady.reason {
        case .closed:
            reason = "Not ready: the data store is closed (the server is stopping)"
        case .unreachable:
            reason = "Not ready: the database cannot be reached; reads and writes fail until it answers"
        case .locked:
            reason = "Not ready: the database is locked by another process; writes wait until it is released"
        case .storageFull, .other:
            reason = "Not ready: the data store does not take writes"
        }
        return APIError(503, reason, headers: APIError.storeRetryAfter)
    }
}

extension QueryOptions {
    static let defaults = try! QueryOptions(query: nil)  // no query: cannot throw
}
