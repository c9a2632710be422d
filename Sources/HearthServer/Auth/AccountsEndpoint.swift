import Dispatch
import HearthAuth
import HearthHTTP
import HearthJSON
import HearthStore

/// The Identity Toolkit endpoints (spec §4.1) at `/v1/accounts:<op>`, also under the
/// emulator-style prefix `/identitytoolkit.googleapis.com/v1/accounts:<op>`. Work that
/// hashes a password runs on the bounded hashing pool; the rest on the work queue.
struct AccountsEndpoint {
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
        let service = context.service
        switch operation {
        case .signUp:
            if let idToken = body.string("idToken") {
                return run(hashing: true, responder) { () throws(AuthError) -> JSONValue in
                    let user = try service.user(forIDToken: idToken)
                    var changes = AccountService.Changes()
                    changes.email = body.string("email")
                    changes.password = body.string("password")
                    let (linked, session) = try service.update(uid: user.uid, changes)
                    context.authenticator.invalidate(user.uid)
                    return Self.signUpResponse(session.map { $0 } ?? Session(user: linked, idToken: idToken, refreshToken: "", expiresIn: 0))
                }
            }
            let email = body.string("email"), password = body.string("password")
            if let retry = context.limitSignIn(address: request.remoteAddress, account: email) { return responder.respond(retry.response) }
            if email == nil && password == nil {
                return run(hashing: false, responder) { () throws(AuthError) -> JSONValue in
                    Self.signUpResponse(try service.signUpAnonymously())
                }
            }
            return run(hashing: true, responder) { () throws(AuthError) -> JSONValue in
                Self.signUpResponse(try service.signUp(email: email, password: password, displayName: body.string("displayName")))
            }
        case .signInWithPassword:
            let email = body.string("email")
            if let retry = context.limitSignIn(address: request.remoteAddress, account: email) { return responder.respond(retry.response) }
            return run(hashing: true, responder) { () throws(AuthError) -> JSONValue in
                let session = try service.signIn(email: email, password: body.string("password"))
                var fields = Self.sessionFields(session)
                fields["kind"] = .string("identitytoolkit#VerifyPasswordResponse")
                fields["registered"] = .bool(true)
                fields["displayName"] = .string(session.user.displayName ?? "")
                return .object(fields)
            }
        case .lookup:
            return run(hashing: false, responder) { () throws(AuthError) -> JSONValue in
                let user = try service.user(forIDToken: body.string("idToken"))
                return .object(["kind": .string("identitytoolkit#GetAccountInfoResponse"), "users": .array([Self.userInfo(user)])])
            }
        case .update:
            let hashes = body.string("password") != nil
            return run(hashing: hashes, responder) { () throws(AuthError) -> JSONValue in
                let user = try service.user(forIDToken: body.string("idToken"))
                var changes = AccountService.Changes()
                changes.email = body.string("email")
                changes.password = body.string("password")
                changes.displayName = body.string("displayName")
                changes.photoURL = body.string("photoUrl")
                let deletions = body.strings("deleteAttribute")
                changes.deleteDisplayName = deletions.contains("DISPLAY_NAME")
                changes.deletePhotoURL = deletions.contains("PHOTO_URL")
                let (updated, session) = try service.update(uid: user.uid, changes)
                context.authenticator.invalidate(user.uid)
                var fields = Self.userInfo(updated).objectValue ?? [:]
                fields["kind"] = .string("identitytoolkit#SetAccountInfoResponse")
                if let session { fields.merge(Self.sessionFields(session)) { $1 } }
                return .object(fields)
            }
        case .delete:
            return run(hashing: false, responder) { () throws(AuthError) -> JSONValue in
                let user = try service.user(forIDToken: body.string("idToken"))
                try service.delete(uid: user.uid)
                context.authenticator.invalidate(user.uid)
                return .object(["kind": .string("identitytoolkit#DeleteAccountResponse")])
            }
        }
    }

    /// Runs `work` off the I/O queue and answers with its JSON or its error.
    private func run(hashing: Bool, _ responder: HTTPResponder, _ work: @escaping @Sendable () throws(AuthError) -> JSONValue) {
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

    static func sessionFields(_ session: Session) -> [String: JSONValue] {
        var fields: [String: JSONValue] = [
            "localId": .string(session.user.uid),
            "idToken": .string(session.idToken),
            "refreshToken": .string(session.refreshToken),
            "expiresIn": .string(String(session.expiresIn)),
        ]
        if let email = session.user.email { fields["email"] = .string(email) }
        return fields
    }

    static func signUpResponse(_ session: Session) -> JSONValue {
        var fields = sessionFields(session)
        fields["kind"] = .string("identitytoolkit#SignupNewUserResponse")
        return .object(fields)
    }

    /// A user as `accounts:lookup` shows it; never the password hash.
    static func userInfo(_ user: UserRecord) -> JSONValue {
        var fields: [String: JSONValue] = [
            "localId": .string(user.uid),
            "emailVerified": .bool(user.emailVerified),
            "disabled": .bool(user.disabled),
            "createdAt": .string(String(user.createdAt)),
            "validSince": .string(String(user.validSince)),
            "providerUserInfo": .array(user.email.map {
                [.object(["providerId": .string("password"), "federatedId": .string($0), "rawId": .string($0), "email": .string($0)])]
            } ?? []),
        ]
        if let email = user.email { fields["email"] = .string(email) }
        if let name = user.displayName { fields["displayName"] = .string(name) }
        if let url = user.photoURL { fields["photoUrl"] = .string(url) }
        if let last = user.lastLoginAt { fields["lastLoginAt"] = .string(String(last)) }
        if let changed = user.passwordUpdatedAt { fields["passwordUpdatedAt"] = .int(changed) }
        if let claims = user.customClaims { fields["customAttributes"] = .string(claims) }
        return .object(fields)
    }
}

extension AuthError {
    func withRetry(_ seconds: Int) -> AuthError {
        var copy = self
        copy.retryAfter = seconds
        return copy
    }
}
