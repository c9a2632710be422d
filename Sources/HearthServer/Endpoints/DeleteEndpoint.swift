import HearthHTTP
import HearthJSON
import HearthStore

/// `DELETE <path>.json`: remove the node; answers `null` (spec §1.2).
enum DeleteEndpoint {
    static func handle(_ request: RESTRequest, caller: Caller, context: RESTContext, responder: HTTPResponder) {
        WriteEndpoint.submit(
            .set(WriteEntry(path: request.path, value: nil)), echo: .fixed(.null),
            request: request, caller: caller, context: context, responder: responder)
    }
}
