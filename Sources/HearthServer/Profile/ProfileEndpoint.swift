import Foundation
import HearthHTTP
import HearthJSON

extension Router {
    /// `POST /.profile?ns=<name>&action=start&duration=<s>` / `action=stop` / `action=status`
    /// (docs/profiling.md): admins only.
    static let profilePath = "/.profile"

    /// Starts, reads or stops the profiling window of this context's database.
    func profile(_ request: HTTPRequest, responder: HTTPResponder) {
        guard request.method == "POST" else {
            return responder.respond(APIError(405, "Method not allowed", headers: [("Allow", "POST")]).response)
        }
        let parameters = Self.parameters(of: request)
        let database = context.database
        let node = ProfileEndpoint.node(request, leaseID: context.wire?.onDisconnect.leaseEpoch)
        let namespace = context.namespaceLabel
        asAdmin(request, parameters, responder: responder) {
            let answer = ProfileEndpoint.answer(parameters, database: database, namespace: namespace, node: node)
            switch answer {
            case .success(let value): responder.respond(JSONResponse.make(value, options: .defaults, render: false))
            case .failure(let error): responder.respond(error.response)
            }
        }
    }
}

/// The answers of `/.profile`.
enum ProfileEndpoint {
    /// Which node answered: on a shared (PostgreSQL) engine each node profiles only itself.
    static func node(_ request: HTTPRequest, leaseID: String?) -> JSONValue {
        var node: [JSONKey: JSONValue] = [
            "hostname": .string(ProcessInfo.processInfo.hostName),
            "address": .string(request.headers["Host"].map { String($0.prefix(256)) } ?? ""),
            "sharedEngine": .bool(leaseID != nil),
            "scope": .string(leaseID == nil
                ? "this node's database"
                : "this node only: every node of a shared engine profiles the operations it serves"),
        ]
        if let leaseID { node["id"] = .string(leaseID) }
        return .object(node)
    }

    static func answer(_ parameters: [String: String], database: Database, namespace: String, node: JSONValue) -> Result<JSONValue, APIError> {
        let profiler = database.profiler
        switch parameters["action"] {
        case "start":
            guard let text = parameters["duration"], let seconds = Int(text), (1...Profiler.Limits.maxDurationSeconds).contains(seconds) else {
                return .failure(APIError(400, "duration must be a whole number of seconds from 1 to \(Profiler.Limits.maxDurationSeconds)"))
            }
            do throws(Profiler.StartError) {
                try database.startProfile(seconds: seconds)
            } catch {
                switch error {
                case .alreadyRecording(let left):
                    return .failure(APIError(409, "A profile is already recording on this node for namespace \(namespace); it ends in \(left) s (stop it with action=stop)"))
                case .badDuration:
                    return .failure(APIError(400, "duration must be a whole number of seconds from 1 to \(Profiler.Limits.maxDurationSeconds)"))
                }
            }
            return .success(.object(["status": .string("recording"), "namespace": .string(namespace),
                                     "durationSeconds": .int(Int64(seconds)), "node": node]))
        case "status":
            let left = profiler.secondsLeft
            return .success(.object(["recording": .bool(left != nil), "secondsLeft": .int(Int64(left ?? 0)),
                                     "namespace": .string(namespace), "node": node]))
        case "stop":
            guard let report = profiler.stop() else {
                return .failure(APIError(409, "No profile was started on this node for namespace \(namespace) (start one with action=start)"))
            }
            guard case .object(var body) = report.json else { return .failure(.internalError) }
            body["namespace"] = .string(namespace)
            body["node"] = node
            return .success(.object(body))
        default:
            return .failure(APIError(400, "action must be start, status or stop"))
        }
    }
}
