import HearthHTTP
import HearthJSON
import HearthStore

/// `PUT <path>.json`: replace the value; answers with the data written (spec §1.2).
enum PutEndpoint {
    static func handle(_ request: RESTRequest, caller: Caller, context: RESTContext, responder: HTTPResponder) throws(APIError) {
        let value = try WriteEndpoint.normalize(try WriteEndpoint.body(request), at: request.path)
        WriteEndpoint.submit(
            .set(WriteEntry(path: request.path, value: value)), echo: .applied,
            request: request, caller: caller, context: context, responder: responder)
    }
}
