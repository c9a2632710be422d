import HearthHTTP
import HearthJSON

/// `DELETE <path>.json`: remove the node; answers `null` (docs/protocol/rest.md §1.2).
enum DeleteEndpoint {
    static func handle(_ request: RESTRequest, caller: Caller, context: RESTContext, responder: HTTPResponder) {
        WriteEndpoint.submit(
            DatabaseWrite.delete(at: request.path), echo: .fixed(.null),
            request: request, caller: caller, context: context, responder: responder)
    }
}
