import HearthHTTP
import HearthJSON
import HearthStore

/// `GET <path>.json` (spec §1.2, §1.3 `shallow`, §1.4 ETags): read access is checked on
/// the same snapshot the value is read from.
enum ReadEndpoint {
    static func handle(_ request: RESTRequest, caller: Caller, context: RESTContext, responder: HTTPResponder) {
        let policy = context.policy
        let wantsTag = ETag.wanted(request.http)
        let ifNoneMatch = ETag.ifNoneMatch(request.http)
        if let query = request.options.query {
            if let index = query.requiredIndex, !policy.indexes(at: request.path).contains(index) {
                return responder.respond(query.missingIndexError(at: request.path).response)
            }
        }
        context.store.read({ view -> HTTPResponse in
            guard caller.isAdmin || policy.canRead(request.path, query: request.options.query?.rules, caller: caller, view: view) else {
                return APIError.permissionDenied.response
            }
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
                    ? .null : .object(Dictionary(uniqueKeysWithValues: keys.map { ($0, JSONValue.bool(true)) }))
                return JSONResponse.make(value, options: request.options, render: false)
            }
            if request.options.export {
                return JSONResponse.make(try view.exportValue(at: request.path), options: request.options)
            }
            return JSONResponse.make(try view.value(at: request.path), options: request.options)
        }, completion: { result in
            switch result {
            case .success(let response): responder.respond(response)
            case .failure(let error): responder.respond(context.response(for: error).response)
            }
        })
    }
}
