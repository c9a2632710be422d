import HearthHTTP
import HearthJSON

/// `PATCH <path>.json`: update the named children; keys may be slash paths, applied
/// atomically, all or nothing (docs/protocol/rest.md §1.2). Answers with the request data.
enum PatchEndpoint {
    static func handle(_ request: RESTRequest, caller: Caller, context: RESTContext, responder: HTTPResponder) throws(APIError) {
        let body = try WriteEndpoint.body(request)
        do {
            guard let update = try DatabaseWrite.update(body, at: request.path) else {
                // `{}` changes nothing: answer without a write, so no empty change is logged.
                return responder.respond(JSONResponse.make(body, options: request.options, render: false))
            }
            WriteEndpoint.submit(
                update, echo: .patchBody(body), render: false,
                request: request, caller: caller, context: context, responder: responder)
        } catch {
            throw .badRequest(error.description)
        }
    }
}
