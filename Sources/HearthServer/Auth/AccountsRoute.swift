import Dispatch
import HearthAuth
import HearthHTTP
import HearthJSON
import HearthStore

/// Routes `/v1/accounts:<op>` and `/identitytoolkit.googleapis.com/v1/accounts:<op>` (spec
/// §4.1) to one endpoint file per operation. Work that hashes a password runs on the
/// bounded hashing pool; the rest on the work queue.
struct AccountsRoute {
    let context: AuthContext

    enum Operation: String {
        case signUp, signInWithPassword, lookup, update, delete
    }

    static func operation(forPath path: String) -> Operation? {
        let tail: Substring
        if path.hasPrefix("/v1/accounts:") {
            tail = path.dropFirst("/v1/accounts:".count)
        } else if path.hasPrefix("/identitytoolkit.googleapis.com/v1/accounts:") {
            tail = path.dropFirst("/identitytoolkit.googleapis.com/v1/accounts:".count)
        } else {
            return nil
        }
        return Operation(rawValue: String(tail))
    }

    func handle(_ operation: Operation, _ request: HTTPRequest, responder: HTTPResponder) {
        guard request.method == "POST" else { return responder.respond(AuthError("METHOD_NOT_ALLOWED", status: 405).response) }
        let body: AuthRequestBody
        do { body = try AuthRequestBody(request) } catch { return responder.respond(error.response) }
        switch operation {
        case .signUp: SignUpEndpoint.handle(body, request, route: self, responder: responder)
        case .signInWithPassword: SignInEndpoint.handle(body, request, route: self, responder: responder)
        case .lookup: LookupEndpoint.handle(body, request, route: self, responder: responder)
        case .update: UpdateEndpoint.handle(body, request, route: self, responder: responder)
        case .delete: DeleteAccountEndpoint.handle(body, request, route: self, responder: responder)
        }
    }

    /// Runs `work` off the I/O queue and answers with its JSON or its error.
    func run(hashing: Bool, _ responder: HTTPResponder, _ work: @escaping @Sendable () throws(AuthError) -> JSONValue) {
        let job: @Sendable () -> HTTPResponse = {
            do throws(AuthError) {
                return JSONResponse.make(try work(), options: .defaults, render: false)
            } catch {
                return error.response
            }
        }
        if hashing {
            context.pool.submit(job) { result in
                switch result {
                case .success(let response): responder.respond(response)
                case .failure: responder.respond(AuthError.tooManyAttempts.withRetry(1).response)
                }
            }
        } else {
            context.work.async { responder.respond(job()) }
        }
    }
}

extension AuthError {
    func withRetry(_ seconds: Int) -> AuthError {
        var copy = self
        copy.retryAfter = seconds
        return copy
    }
}
