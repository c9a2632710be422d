import HearthHTTP
import HearthStore

/// `GET /healthz`: the process is up and serving HTTP. `GET /readyz`: the store takes
/// writes (a write transaction opens on the writer, and space has come back after writes
/// were refused for lack of it), so a load balancer can route here; 503 with the reason.
enum HealthEndpoint {
    /// Served even to a client address past its connection cap
    /// (`HTTPServerConfiguration.uncappedPaths`): a load balancer behind the same address
    /// as the clients must still learn the server is up.
    static let paths: Set<String> = ["/healthz", "/readyz"]

    static func healthz(responder: HTTPResponder) {
        responder.respond(JSONResponse.make(.object(["status": .string("ok")]), options: QueryOptions.defaults))
    }

    static func readyz(context: RESTContext, responder: HTTPResponder) {
        context.store.checkWritable { result in
            switch result {
            case .success:
                responder.respond(JSONResponse.make(.object(["status": .string("ready")]), options: QueryOptions.defaults))
            case .failure(let error as StoreError) where error.isDiskFull:
                // The storage observer has logged what to do.
                // The store's own text names the data directory: that stays in the log.
                responder.respond(APIError(503, "Not ready: the data volume is full, writes are refused until space is freed",
                                           detail: "less than \(DiskSpace.reserveBytes) bytes free beside the reserve").response)
            case .failure(let error):
                context.logger.warning("readiness check failed: \(error)")
                responder.respond(APIError.unavailable.response)
            }
        }
    }
}

extension QueryOptions {
    static let defaults = try! QueryOptions(query: nil)  // no query: cannot throw
}
