import HearthHTTP
import HearthJSON

extension WireSession {
    // MARK: Auth (docs/protocol/wire.md §4.7)

    func authenticate(number: Int64?, token: String) {
        // A token the server verified before (the cache, as REST's): decided here, without
        // a hop to the work queue (thousands of clients reconnecting with their tokens
        // would otherwise wake a worker thread each).
        if !directLocal && LocalOnlyCredentials.isEmulatorCredential(token) {
            return authenticationFailed(number, .invalid)
        }
        context.authenticator.decide(token: token, work: context.work, replyOn: queue) { result in
            switch result {
            case .success(let credential): self.authenticated(number, credential)
            case .failure(let error): self.authenticationFailed(number, error)
            }
        }
    }

    func authenticated(_ number: Int64?, _ credential: Authenticator.Credential) {
        setCredential(credential)
        let expires: JSONValue = credential.expiresAt.map { .int($0 / 1000) } ?? .null
        answer(number, "ok", .object(["auth": credential.caller.auth, "expires": expires]))
    }

    /// A failed `auth` signs the connection out: the identity it held before does
    /// not stay in force, and its listens are cancelled. Firebase's clients close and
    /// reconnect after any failed `auth` (docs/protocol/wire.md §4.7: "until auth succeeds
    /// the connection is unauthenticated"), so one that stays sees what a signed-out user
    /// sees.
    func authenticationFailed(_ number: Int64?, _ error: Authenticator.CredentialError) {
        authFailures += 1
        if authFailures > context.limits.maxAuthFailures {
            busy = false
            return fail(.policyViolation, "Over \(context.limits.maxAuthFailures) failed auth attempts on this connection; sign in again")
        }
        setCredential(Authenticator.Credential(caller: .unauthenticated))
        answer(number, error == .expired ? "expired_token" : "invalid_token", .string(error.message))
    }

    /// A new identity: listens opened under another one are ended with `c` (the client
    /// cancels those listeners; it re-listens under the new identity if it wants to). A
    /// refreshed token of the same identity keeps them.
    func setCredential(_ new: Authenticator.Credential) {
        let same = new.caller == credential.caller
        credential = new
        if same {
            // A refreshed token of the same identity: the open listens follow its times.
            credentialTimes?.renew(issuedAt: new.issuedAt, expiresAt: new.expiresAt)
            return
        }
        credentialTimes = nil
        for listen in listens {
            listen.listening.cancel()
            revoked(listen.key, tag: listen.tag)
        }
        listens = []
    }
}
