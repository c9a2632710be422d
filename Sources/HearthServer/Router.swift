import HearthHTTP
import HearthJSON
import Logging

/// Sends each request to its endpoint. Fixed routes first; every other path is an RTDB
/// location (spec §1.1), with or without the `.json` suffix. Data stored under a key named
/// like a fixed route (`healthz`) is reached with the suffix: `/healthz.json`.
struct Router: HTTPHandler {
    let context: RESTContext

    func handle(_ request: HTTPRequest, responder: HTTPResponder) {
        switch request.path {
        case "/healthz":
            return fixedRoute(request, responder) { HealthEndpoint.healthz(responder: responder) }
        case "/readyz":
            return fixedRoute(request, responder) { HealthEndpoint.readyz(context: context, responder: responder) }
        default:
            break
        }
        if request.method == "OPTIONS" {
            return responder.respond(Self.preflight(request))
        }
        do {
            let rest = try RESTRequest(request)
            switch rest.method {
            case .get: ReadEndpoint.handle(rest, context: context, responder: responder)
            case .put: try PutEndpoint.handle(rest, context: context, responder: responder)
            case .post: try PostEndpoint.handle(rest, context: context, responder: responder)
            case .patch: try PatchEndpoint.handle(rest, context: context, responder: responder)
            case .delete: DeleteEndpoint.handle(rest, context: context, responder: responder)
            }
        } catch {
            responder.respond(error.response)
        }
    }

    private func fixedRoute(_ request: HTTPRequest, _ responder: HTTPResponder, _ body: () -> Void) {
        guard request.method == "GET" || request.method == "HEAD" else {
            return responder.respond(APIError(405, "Method not allowed", headers: [("Allow", "GET, HEAD")]).response)
        }
        body()
    }

    /// CORS preflight for browser clients (DESIGN.md §7).
    static func preflight(_ request: HTTPRequest) -> HTTPResponse {
        var headers = JSONResponse.corsHeaders()
        headers.add("Access-Control-Allow-Methods", "GET, PUT, POST, PATCH, DELETE, OPTIONS")
        headers.add("Access-Control-Allow-Headers",
                    request.headers["Access-Control-Request-Headers"].map(Self.sanitizedHeaderList) ?? "Authorization, Content-Type")
        headers.add("Access-Control-Max-Age", "3600")
        return HTTPResponse(status: 204, headers: headers)
    }

    /// Only header-name characters, so the echo cannot inject anything into the response.
    static func sanitizedHeaderList(_ list: String) -> String {
        String(list.unicodeScalars.filter { $0.isASCII && ($0 == "," || $0 == " " || $0 == "-" || $0.properties.isAlphabetic || ("0"..."9").contains($0)) }.map(Character.init))
    }
}
