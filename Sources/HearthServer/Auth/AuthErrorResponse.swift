import HearthAccounts
import HearthHTTP
import HearthJSON

/// The HTTP side of the account core's `AuthError` (docs/protocol/auth.md §4.2): its status
/// and Firebase's error JSON,
/// `{"error":{"code":400,"message":"CODE[ : detail]","errors":[{"message":…, "domain":"global","reason":"invalid"}]}}`.
extension AuthError {
    public var status: Int {
        switch kind {
        case .invalidRequest: 400
        case .unauthenticated: 401
        case .forbidden: 403
        case .notFound: 404
        case .methodNotAllowed: 405
        case .rateLimited: 429
        case .internalFailure: 500
        case .notConfigured: 501
        case .unavailable: 503
        case .storageFull: 507
        }
    }

    public var response: HTTPResponse {
        var headers = HTTPHeaders()
        headers.add("Content-Type", JSONResponse.contentType)
        headers.add("Access-Control-Allow-Origin", "*")
        if let retryAfter { headers.add("Retry-After", String(retryAfter)) }
        let body: JSONValue = .object(["error": .object([
            "code": .int(Int64(status)),
            "message": .string(message),
            "errors": .array([.object(["message": .string(message), "domain": .string("global"), "reason": .string("invalid")])]),
        ])])
        return HTTPResponse(status: status, headers: headers, body: JSONWriter.write(body))
    }
}
