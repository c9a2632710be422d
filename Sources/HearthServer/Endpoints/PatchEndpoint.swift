import HearthHTTP
import HearthJSON
import HearthStore

/// `PATCH <path>.json`: update the named children; keys may be slash paths, applied
/// atomically, all or nothing (spec §1.2). Answers with the request data.
enum PatchEndpoint {
    static func handle(_ request: RESTRequest, caller: Caller, context: RESTContext, responder: HTTPResponder) throws(APIError) {
        let body = try WriteEndpoint.body(request)
        let updates: [(path: DataPath, value: JSONValue?)]
        do {
            updates = try MultiPathUpdate.parse(base: request.path, body: body)
        } catch {
            throw .badRequest(error.description)
        }
        let entries = updates.map { WriteEntry(path: $0.path, value: $0.value) }
        if entries.isEmpty {
            // `{}` changes nothing: answer without a write, so no empty change is logged.
            return responder.respond(JSONResponse.make(body, options: request.options, render: false))
        }
        WriteEndpoint.submit(
            .update(base: request.path, entries: entries), echo: .patchBody(body), render: false,
            request: request, caller: caller, context: context, responder: responder)
    }
}
