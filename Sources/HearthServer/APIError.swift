import HearthDatabase
import HearthHTTP
import HearthJSON
import HearthRules

/// An error as a REST client sees it: a status and a short text, sent as
/// `{"error":"<text>"}` (docs/protocol/rest.md §1.9). Internal causes stay in the log,
/// never in `message`.
struct APIError: Error, Sendable, Equatable {
    var status: Int
    var message: String
    var headers: [(String, String)] = []
    /// More for a developer, sent as a `"detail"` member beside `"error"`: Firebase clients
    /// read only `"error"`, so its text stays exactly Firebase's (docs/rest.md, "Errors").
    var detail: String?
    /// The namespace the answer is about, when it names one (`/readyz`).
    var namespace: String? = nil

    init(_ status: Int, _ message: String, headers: [(String, String)] = [], detail: String? = nil) {
        self.status = status
        self.message = message
        self.headers = headers
        self.detail = detail
    }

    static func == (a: APIError, b: APIError) -> Bool {
        a.status == b.status && a.message == b.message && a.detail == b.detail
    }

    // Texts observed from Firebase where known (docs/protocol/rest.md §1.9), ours
    // otherwise.
    static let invalidData = APIError(400, "Invalid data; couldn't parse JSON object, array, or value.")
    static let permissionDenied = APIError(401, "Permission denied")
    static let internalError = APIError(500, "Internal server error")
    /// `Retry-After` of a 503 that the store's unavailability caused (an outage of the
    /// database, a store closing), seconds: a node is back within a fraction of a second of
    /// its database (docs/scaling.md), so a client or balancer tries again this soon.
    static let storeRetryAfterSeconds = 1
    static let storeRetryAfter = [("Retry-After", String(storeRetryAfterSeconds))]
    /// The store could not take a request that is neither a read nor a write of the tree.
    static let unavailable = APIError(503, "Service unavailable; the request was not attempted", headers: storeRetryAfter)
    /// A read (or a stream's first read) the store could not serve.
    static let readUnavailable = APIError(503, "Service unavailable; the read was not served", headers: storeRetryAfter)
    /// A write that certainly did not commit (docs/scaling.md): trying it again applies it once.
    static let writeNotWritten = APIError(503, "Service unavailable; the write was not made, nothing was written",
                                                 headers: storeRetryAfter)
    /// A write whose commit was sent but not answered, and whose outcome could not be
    /// learnt: it may have been written, so a retried push or increment may apply twice.
    static let writeOutcomeUnknown = APIError(
        503, "Service unavailable; the write's outcome is unknown: it may have been written", headers: storeRetryAfter)
    /// The data volume is full: nothing was written (Firebase clients keep a write that
    /// got a non-2xx). Deletes still commit (`DiskSpace`'s reserve), so space can be freed.
    static let insufficientStorage = APIError(
        507, "Insufficient storage: the server's disk is full, so the write was not saved; deletes still work")

    /// A write the rules refused. A failed `.validate` keeps Firebase's 401 `Permission
    /// denied` and names the rule and the node in `detail`; a write whose check ran out of
    /// `RuleLimits` is not a permission problem: 413, saying it is too large to validate.
    static func writeDenied(_ denial: RuleDenial?) -> APIError {
        switch denial {
        case .validationFailed(let rule, let path, let reason)?:
            var denied = permissionDenied
            denied.detail = ".validate failed at \(path.description)" + (reason.map { ": \($0)" } ?? "") + " (rule \(rule))"
            return denied
        case .limitExceeded(.evaluationSteps, let limit)?:
            return APIError(413, "Write too large to validate: checking it against the rules took more than \(limit) evaluation steps; write fewer nodes at once")
        case .limitExceeded(.validatedNodes, let limit)?:
            return APIError(413, "Write too large to validate: it has more than \(limit) nodes under .validate rules; write fewer nodes at once")
        case .notGranted?, .aborted?, nil:
            return permissionDenied
        }
    }

    /// A write over `StoreOptions.maxNodesPerWrite` (docs/rest.md, "Huge writes").
    static func writeTooLarge(_ reason: DatabaseError.TooLarge) -> APIError {
        switch reason {
        case .writes(let limit):
            return APIError(413, "Write too large: the data has more than \(limit) nodes; write it in parts of at most \(limit)")
        case .replaces(let limit):
            return APIError(413, "Write too large: it would replace or delete more than \(limit) stored nodes; delete the children in parts first")
        }
    }

    /// A path or key the URL names is invalid; `PathError`'s text already reads
    /// "Invalid path: …" (so the prefix is not added here again).
    static func invalidPath(_ error: PathError) -> APIError {
        APIError(400, error.description)
    }

    static func badRequest(_ detail: String) -> APIError {
        APIError(400, detail)
    }

    static func methodNotAllowed(_ method: String) -> APIError {
        APIError(405, "Method not allowed", headers: [("Allow", "GET, HEAD, PUT, POST, PATCH, DELETE, OPTIONS")])
    }

    var response: HTTPResponse {
        var headers = HTTPHeaders()
        headers.add("Content-Type", JSONResponse.contentType)
        headers.add("Access-Control-Allow-Origin", "*")
        for (name, value) in self.headers { headers.add(name, value) }
        var members: [JSONKey: JSONValue] = ["error": .string(message)]
        if let detail { members["detail"] = .string(detail) }
        if let namespace { members["namespace"] = .string(namespace) }
        return HTTPResponse(status: status, headers: headers, body: JSONWriter.write(.object(members)))
    }
}
