import HearthHTTP
import HearthJSON

/// An RTDB REST request after method override, path and query parsing.
struct RESTRequest: Sendable {
    enum Method: String, Sendable { case get = "GET", put = "PUT", post = "POST", patch = "PATCH", delete = "DELETE" }

    var method: Method
    var path: DataPath
    var options: QueryOptions
    var http: HTTPRequest

    /// Methods a `POST` may be turned into with `X-HTTP-Method-Override`
    /// (docs/protocol/rest.md §1.2).
    static let overridable: Set<String> = ["PUT", "PATCH", "DELETE", "POST"]

    init(_ request: HTTPRequest) throws(APIError) {
        var method = request.method
        if method == "HEAD" { method = "GET" }
        if let override = request.headers["X-HTTP-Method-Override"] {
            let wanted = override.uppercased()
            guard method == "POST", Self.overridable.contains(wanted) else {
                throw .badRequest("X-HTTP-Method-Override must be sent with POST and name PUT, PATCH or DELETE")
            }
            method = wanted
        }
        guard let parsed = Method(rawValue: method) else { throw .methodNotAllowed(method) }
        self.method = parsed
        do {
            self.path = try DataPath(urlPath: request.path)
        } catch {
            throw .invalidPath(error)
        }
        self.options = try QueryOptions(query: request.query)
        self.http = request
    }
}
