import Dispatch
import HearthAccounts
import HearthAuth
import HearthHTTP
import HearthJSON

/// Routes `/v1/accounts:<op>` and `/identitytoolkit.googleapis.com/v1/accounts:<op>`
/// (docs/protocol/auth.md §4.1) to one endpoint file per operation. Work that hashes a
/// password runs on the bounded hashing pool; the rest on the work queue.
struct AccountsRoute {
    let context: AuthContext

    enum Operation: String {
        case signUp, signInWithPassword, lookup, update, delete, signInWithCustomToken, sendOobCode, resetPassword, signInWithIdp
    }

    static func operation(forPath path: String) -> Operation? {
        let tail: Substring
        if path.hasPrefix("/v1/accounts:") {
            tail = path.dropFirst("/v1/accounts:".count)
        } else if path.hasPrefix("/identitytoolkit.googleapis.com/v1/accounts:") {
            tail = path.dropFirst("/identitytoolkit.googleapis.com/v1/accounts:".count)
        } else if let method = legacyMethod(path) {
            return legacyOperations[method]
        } else {
            return nil
        }
        return Operation(rawValue: String(tail))
    }

    /// The legacy Identity Toolkit v3 routes that older SDKs and community clients call
    /// (`/identitytoolkit/v3/relyingparty/<method>`, and with the emulator-style host
    /// prefix), mapped onto the v1 operations as the Firebase Auth emulator does. Their
    /// bodies and answers have the same fields (and `kind`s) as v1's.
    static let legacyPrefixes = ["/identitytoolkit/v3/relyingparty/", "/www.googleapis.com/identitytoolkit/v3/relyingparty/"]

    static let legacyOperations: [String: Operation] = [
        "signupNewUser": .signUp, "verifyPassword": .signInWithPassword, "getAccountInfo": .lookup,
        "setAccountInfo": .update, "deleteAccount": .delete, "verifyCustomToken": .signInWithCustomToken,
        "getOobConfirmationCode": .sendOobCode, "resetPassword": .resetPassword, "verifyAssertion": .signInWithIdp,
    ]

    /// The v3 method of a legacy route, if `path` is one.
    static func legacyMethod(_ path: String) -> String? {
        for prefix in legacyPrefixes where path.hasPrefix(prefix) {
            return String(path.dropFirst(prefix.count))
        }
        return nil
    }

    /// Paths that belong to the accounts API whatever follows them: never a database
    /// location, so a request to an unknown auth route is refused, not stored (under open
    /// rules a v3 sign-up used to be written into the tree, password included).
    static let reservedPrefixes = ["/v1/", "/identitytoolkit.googleapis.com/", "/securetoken.googleapis.com/",
                                   "/identitytoolkit/", "/www.googleapis.com/"]

    static func isReserved(_ path: String) -> Bool {
        reservedPrefixes.contains { path.hasPrefix($0) }
    }

    func handle(_ operation: Operation, _ request: HTTPRequest, responder: HTTPResponder) {
        guard request.method == "POST" else { return responder.respond(AuthError("METHOD_NOT_ALLOWED", kind: .methodNotAllowed).response) }
        let body: AuthRequestBody
        do { body = try AuthRequestBody(request) } catch { return responder.respond(error.response) }
        do throws(AuthError) {
            try dispatch(operation, body, request, responder: responder)
        } catch {
            // A field of the wrong type (`AuthRequestBody.typeMismatch`), before any work.
            responder.respond(error.response)
        }
    }

    private func dispatch(_ operation: Operation, _ body: AuthRequestBody, _ request: HTTPRequest,
                          responder: HTTPResponder) throws(AuthError) {
        switch operation {
        case .signUp: try SignUpEndpoint.handle(body, request, route: self, responder: responder)
        case .signInWithPassword: try SignInEndpoint.handle(body, request, route: self, responder: responder)
        case .lookup: try LookupEndpoint.handle(body, request, route: self, responder: responder)
        case .update:
            if try body.string("oobCode") != nil, try body.string("idToken") == nil {
                return try EmailActionEndpoints.verifyEmail(body, request, route: self, responder: responder)
            }
            try UpdateEndpoint.handle(body, request, route: self, responder: responder)
        case .delete: try DeleteAccountEndpoint.handle(body, request, route: self, responder: responder)
        case .signInWithCustomToken: try CustomTokenEndpoint.handle(body, request, route: self, responder: responder)
        case .sendOobCode: try EmailActionEndpoints.sendOobCode(body, request, route: self, responder: responder)
        case .resetPassword: try EmailActionEndpoints.resetPassword(body, request, route: self, responder: responder)
        case .signInWithIdp: try SignInWithIdpEndpoint.handle(body, request, route: self, responder: responder)
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
