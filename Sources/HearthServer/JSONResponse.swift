import HearthHTTP
import HearthJSON

/// Success responses for RTDB paths.
enum JSONResponse {
    static let contentType = "application/json; charset=utf-8"

    /// `value` as the body, rendered the way Firebase renders it (arrays back from
    /// integer-keyed objects, docs/protocol/rest.md §1.8); `print=silent` gives 204 with no
    /// body.
    static func make(_ value: JSONValue, options: QueryOptions, render: Bool = true, status: Int = 200) -> HTTPResponse {
        if options.print == .silent {
            return HTTPResponse(status: 204, headers: corsHeaders())
        }
        let shown = render && !options.export ? FirebaseTree.render(value) : value
        return body(JSONWriter.write(shown, style: options.print == .pretty ? .pretty : .compact), status: status)
    }

    /// An already rendered JSON body (the read cache's, the row renderer's) with the
    /// RTDB headers.
    static func body(_ body: [UInt8], status: Int = 200) -> HTTPResponse {
        var headers = corsHeaders()
        headers.add("Content-Type", contentType)
        return HTTPResponse(status: status, headers: headers, body: body)
    }

    static func corsHeaders() -> HTTPHeaders {
        var headers = HTTPHeaders()
        headers.add("Access-Control-Allow-Origin", "*")
        return headers
    }
}
