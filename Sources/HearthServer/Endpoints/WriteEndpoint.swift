import Dispatch
import HearthHTTP
import HearthJSON
import HearthStore

/// The shared tail of every write: queue it for the writer with the rules gate, then
/// answer with `echo` once it committed.
enum WriteEndpoint {
    static func submit(
        _ operation: WriteOperation, echo: JSONValue, render: Bool = true,
        request: RESTRequest, caller: Caller, context: RESTContext, responder: HTTPResponder
    ) {
        context.store.write(operation, check: context.writeCheck(for: caller)) { result in
            switch result {
            case .success:
                // The completion runs on the single writer: render a structured echo (a
                // whole subtree for a PUT) elsewhere so the writer moves on to the next batch.
                let structured: Bool
                switch echo {
                case .object, .array: structured = true
                default: structured = false
                }
                if structured && request.options.print != .silent {
                    DispatchQueue.global().async {
                        responder.respond(JSONResponse.make(echo, options: request.options, render: render))
                    }
                } else {
                    responder.respond(JSONResponse.make(echo, options: request.options, render: render))
                }
            case .failure(let failure):
                responder.respond(context.response(for: failure).response)
            }
        }
    }

    /// The request body as JSON; a missing or unparsable body is 400 (spec §1.2).
    static func body(_ request: RESTRequest, allowEmpty: Bool = false) throws(APIError) -> JSONValue {
        if request.http.body.isEmpty {
            if allowEmpty { return .null }
            throw .invalidData
        }
        do {
            return try JSONParser.parse(request.http.body)
        } catch {
            throw .invalidData
        }
    }

    /// The normalised value (nil deletes) or a 400 naming what is wrong.
    static func normalize(_ value: JSONValue, at path: DataPath) throws(APIError) -> JSONValue? {
        do {
            return try FirebaseTree.normalize(value, at: path)
        } catch {
            throw .badRequest(error.description)
        }
    }
}
