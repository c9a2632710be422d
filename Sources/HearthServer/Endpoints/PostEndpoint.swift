import HearthHTTP
import HearthJSON

/// `POST <path>.json`: store the body under a new push ID (docs/protocol/rest.md §1.6) and
/// answer `{"name":"<pushId>"}`. Any JSON value is a valid body, `""` included
/// (docs/protocol/rest.md §1.2).
enum PostEndpoint {
    static func handle(_ request: RESTRequest, caller: Caller, context: RESTContext, responder: HTTPResponder) throws(APIError) {
        let body = try WriteEndpoint.body(request)
        let key = context.pushIDs.next()
        let path: DataPath
        do {
            path = try request.path.child(key)
        } catch {
            throw .invalidPath(error)
        }
        WriteEndpoint.submit(
            try WriteEndpoint.set(body, at: path), echo: .fixed(.object(["name": .string(key)])), render: false,
            request: request, caller: caller, context: context, responder: responder)
    }
}
