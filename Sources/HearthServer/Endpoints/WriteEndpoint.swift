import Dispatch
import HearthHTTP
import HearthDatabase
import HearthJSON

/// The shared tail of every write: queue it for the writer with the rules gate, then
/// answer with `echo` once it committed.
enum WriteEndpoint {
    /// What a successful write answers with.
    enum Echo: Sendable {
        /// The value the write left at the request's path (PUT: the data written, server
        /// values resolved).
        case applied
        /// A fixed answer (POST's name, DELETE's null).
        case fixed(JSONValue)
        /// PATCH's request body; with server values, the applied entries instead.
        case patchBody(JSONValue)
    }

    static func submit(
        _ operation: DatabaseWrite, echo: Echo, render: Bool = true,
        request: RESTRequest, caller: Caller, context: RESTContext, responder: HTTPResponder
    ) {
        // `if-match` (docs/protocol/rest.md §1.4): compare-and-set on the ETag, decided on
        // the writer's view.
        let precondition = ETag.ifMatch(request.http).map { Database.Precondition.ifMatch($0, etagOf: ETag.of) }
        let wantsTag = ETag.wanted(request.http) || precondition != nil
        let hasServerValues = operation.hasServerValues
        context.database.write(operation, as: caller, precondition: precondition) { result in
            switch result {
            case .success(let applied):
                let written = applied.replacedValue(at: request.path)
                let body: JSONValue
                switch echo {
                case .applied: body = written
                case .fixed(let value): body = value
                case .patchBody(let original): body = hasServerValues ? applied.updatedChildren : original
                }
                // The completion runs on the single writer: render a structured echo (a
                // whole subtree for a PUT) elsewhere so the writer moves on to the next batch.
                // A fixed answer (POST's `{"name":…}`, DELETE's null) is small: rendered here,
                // it saves every create a hop through a global queue's thread.
                let structured: Bool
                switch (echo, body) {
                case (.fixed, _): structured = false
                case (_, .object), (_, .array): structured = true
                default: structured = false
                }
                let answer: @Sendable () -> Void = {
                    var response = JSONResponse.make(body, options: request.options, render: render)
                    if wantsTag { response.headers.add("ETag", ETag.of(FirebaseTree.withoutPriorities(written))) }
                    responder.respond(response)
                }
                if (structured && request.options.print != .silent) || wantsTag {
                    DispatchQueue.global().async(execute: answer)
                } else {
                    answer()
                }
            case .failure(.stale(let current, let etag)):
                responder.respond(PreconditionFailed(current: current, etag: etag, options: request.options).response)
            case .failure(let error):
                responder.respond(context.response(for: error, during: .write).response)
            }
        }
    }

    /// The request body as JSON; a missing or unparsable body is 400 (docs/protocol/rest.md
    /// §1.2).
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

    /// The set of the normalised value (nil deletes) or a 400 naming what is wrong.
    static func set(_ value: JSONValue, at path: DataPath) throws(APIError) -> DatabaseWrite {
        do {
            return try DatabaseWrite.set(value, at: path)
        } catch {
            throw .badRequest(error.description)
        }
    }
}
