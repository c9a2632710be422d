import HearthHTTP
import HearthJSON

/// An error as a REST client sees it: a status and a short text, sent as
/// `{"error":"<text>"}` (spec §1.9). Internal causes stay in the log, never in `message`.
public struct APIError: Error, Sendable, Equatable {
    public var status: Int
    public var message: String
    public var headers: [(String, String)] = []

    public init(_ status: Int, _ message: String, headers: [(String, String)] = []) {
        self.status = status
        self.message = message
        self.headers = headers
    }

    public static func == (a: APIError, b: APIError) -> Bool {
        a.status == b.status && a.message == b.message
    }

    // Texts observed from Firebase where known (spec §1.9), ours otherwise.
    public static let invalidData = APIError(400, "Invalid data; couldn't parse JSON object, array, or value.")
    public static let permissionDenied = APIError(401, "Permission denied")
    public static let internalError = APIError(500, "Internal server error")
    public static let unavailable = APIError(503, "Service unavailable; the request was not attempted")

    /// A path or key the URL names is invalid; `PathError`'s text already reads
    /// "Invalid path: …" (so the prefix is not added here again).
    public static func invalidPath(_ error: PathError) -> APIError {
        APIError(400, error.description)
    }

    public static func badRequest(_ detail: String) -> APIError {
        APIError(400, detail)
    }

    public static func methodNotAllowed(_ method: String) -> APIError {
        APIError(405, "Method not allowed", headers: [("Allow", "GET, HEAD, PUT, POST, PATCH, DELETE, OPTIONS")])
    }

    public var response: HTTPResponse {
        var headers = HTTPHeaders()
        headers.add("Content-Type", JSONResponse.contentType)
        headers.add("Access-Control-Allow-Origin", "*")
        for (name, value) in self.headers { headers.add(name, value) }
        return HTTPResponse(status: status, headers: headers, body: JSONWriter.write(.object(["error": .string(message)])))
    }
}
