import HearthHTTP
import HearthJSON

/// `PUT <path>.json`: replace the value; answers with the data written
/// (docs/protocol/rest.md §1.2).
enum PutEndpoint {
    static func handle(_ request: RESTRequest, caller: Caller, context: RESTContext, responder: HTTPResponder) throws(APIError) {
        WriteEndpoint.submit(
            try WriteEndpoint.set(try WriteEndpoint.body(request), at: request.path), echo: .applied,
            request: request, caller: caller, context: context, responder: responder)
    }
}
