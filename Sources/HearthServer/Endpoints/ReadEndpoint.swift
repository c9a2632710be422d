import HearthHTTP
import HearthJSON

/// `GET <path>.json` (docs/protocol/rest.md §1.2, §1.3 `shallow`, §1.4 ETags), through the
/// database core: the core decides read access on the snapshot the value is read from; this
/// adapter chooses the rendering (query, shallow, export, print, ETags) and the HTTP
/// answer.
enum ReadEndpoint {
    static func handle(_ request: RESTRequest, caller: Caller, context: RESTContext, responder: HTTPResponder) {
        let wantsTag = ETag.wanted(request.http)
        let ifNoneMatch = ETag.ifNoneMatch(request.http)
        if let index = context.database.missingIndex(request.options.query, at: request.path) {
            return responder.respond(APIError.missingIndex(index, at: request.path).response)
        }
        // A plain read: the compact rendering, possibly from the read cache (Database).
        if isCacheable(request.options), !wantsTag, ifNoneMatch == nil {
            return context.database.readRendered(request.path, as: caller) { result in
                switch result {
                case .success(let body): responder.respond(JSONResponse.body(body))
                case .failure(let error): responder.respond(context.response(for: error, during: .read).response)
                }
            }
        }
        context.database.read(request.path, query: request.options.query?.rules, as: caller, { view -> HTTPResponse in
            if let query = request.options.query {
                let result = try view.query(query.tree, at: request.path)
                var response = request.options.shallow
                    ? JSONResponse.make(FirebaseTree.shallow(result), options: request.options, render: false)
                    : JSONResponse.make(result, options: request.options)
                if wantsTag { response.headers.add("ETag", ETag.of(result)) }
                return response
            }
            if wantsTag || ifNoneMatch != nil {
                let value = try view.value(at: request.path)
                let etag = ETag.of(value)
                if etag == ifNoneMatch {
                    var headers = JSONResponse.corsHeaders()
                    headers.add("ETag", etag)
                    return HTTPResponse(status: 304, headers: headers)
                }
                var response = request.options.shallow
                    ? JSONResponse.make(FirebaseTree.shallow(value), options: request.options, render: false)
                    : JSONResponse.make(value, options: request.options)
                // A changed value comes with its new tag even unasked: the Python SDK's
                // get_if_changed returns it as the tag for the next call.
                response.headers.add("ETag", etag)
                return response
            }
            if request.options.shallow {
                if let leaf = try view.leaf(at: request.path) {
                    return JSONResponse.make(leaf, options: request.options)
                }
                let keys = try view.childKeys(at: request.path)
                let value: JSONValue = keys.isEmpty
                    ? .null : .object(Dictionary(uniqueKeysWithValues: keys.map { (JSONKey($0), JSONValue.bool(true)) }))
                return JSONResponse.make(value, options: request.options, render: false)
            }
            if request.options.export {
                return JSONResponse.make(try view.exportValue(at: request.path), options: request.options)
            }
            return JSONResponse.make(try view.value(at: request.path), options: request.options)
        }, completion: { result in
            switch result {
            case .success(let response): responder.respond(response)
            case .failure(let error): responder.respond(context.response(for: error, during: .read).response)
            }
        })
    }

    /// Reads whose body is the plain compact rendering of the whole value.
    static func isCacheable(_ options: QueryOptions) -> Bool {
        options.query == nil && !options.shallow && !options.export && options.print == .normal
    }
}
