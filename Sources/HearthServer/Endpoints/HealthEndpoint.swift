import HearthHTTP
import HearthStore

/// `GET /healthz`: the process is up and serving HTTP. `GET /readyz`: the store takes
/// writes (a write transaction opens on the writer), so a load balancer can route here.
enum HealthEndpoint {
    static func healthz(responder: HTTPResponder) {
        responder.respond(JSONResponse.make(.object(["status": .string("ok")]), options: QueryOptions.defaults))
    }

    static func readyz(context: RESTContext, responder: HTTPResponder) {
        context.store.checkWritable { result in
            switch result {
            case .success:
                responder.respond(JSONResponse.make(.object(["status": .string("ready")]), options: QueryOptions.defaults))
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
