import HearthAccounts
import HearthAuth
import HearthHTTP
import HearthJSON

/// The email actions (docs/protocol/auth.md §4.1): `accounts:sendOobCode` mails a
/// password-reset or verification link, `accounts:resetPassword` uses a reset code, and
/// `accounts:update` with an `oobCode` uses a verification code. Mail leaves through the
/// bounded `Mailer`, never on the request path.
enum EmailActionEndpoints {
    static func sendOobCode(_ body: AuthRequestBody, _ request: HTTPRequest, route: AccountsRoute, responder: HTTPResponder) throws(AuthError) {
        let context = route.context, service = context.service
        guard let type = try body.string("requestType"), !type.isEmpty else { return responder.respond(AuthError("MISSING_REQ_TYPE").response) }
        let kind: AccountService.ActionKind
        switch type {
        case "PASSWORD_RESET": kind = .passwordReset
        case "VERIFY_EMAIL": kind = .verifyEmail
        default: return responder.respond(AuthError("OPERATION_NOT_ALLOWED", detail: "requestType \(type.prefix(40)) is not supported").response)
        }
        // Said before anything is looked up, so the answer tells nothing about accounts.
        guard context.mailer != nil else { return responder.respond(AuthError.emailNotConfigured.response) }
        if let mailer = context.mailer, mailer.pending >= mailer.maxQueued { return responder.respond(AuthError.mailQueueFull.response) }
        let email = try body.string("email")
        if let retry = context.limitSignUp(address: request.remoteAddress, account: kind == .passwordReset ? email : nil) {
            return responder.respond(retry.response)
        }
        let idToken = try body.string("idToken")
        route.run(hashing: false, responder) { () throws(AuthError) -> JSONValue in
            let user = try service.actionRecipient(kind, email: email, idToken: idToken)
            // A reset for an unknown (or disabled) address answers the same as for a known
            // one: no account enumeration; no mail is sent.
            if let user, !user.disabled, let address = user.email {
                let code = try service.createActionCode(kind, for: user)
                if let failure = context.sendActionMail(kind, to: address, code: code) { throw failure }
            }
            return .object(["kind": "identitytoolkit#GetOobConfirmationCodeResponse",
                            "email": .string(user?.email ?? email?.lowercased() ?? "")])
        }
    }

    static func resetPassword(_ body: AuthRequestBody, _ request: HTTPRequest, route: AccountsRoute, responder: HTTPResponder) throws(AuthError) {
        let context = route.context, service = context.service
        if let retry = context.limitSignUp(address: request.remoteAddress, account: nil) { return responder.respond(retry.response) }
        let code = try body.string("oobCode"), password = try body.string("newPassword")
        route.run(hashing: password != nil, responder) { () throws(AuthError) -> JSONValue in
            let (email, user) = try service.completePasswordReset(code: code, newPassword: password)
            // Every earlier session of the account ended: forget its cached standing now.
            if let user { context.authenticator.invalidate(user.uid) }
            return .object(["kind": "identitytoolkit#ResetPasswordResponse", "email": .string(email), "requestType": "PASSWORD_RESET"])
        }
    }

    /// `accounts:update` with `oobCode` and no `idToken`: an email verification.
    static func verifyEmail(_ body: AuthRequestBody, _ request: HTTPRequest, route: AccountsRoute, responder: HTTPResponder) throws(AuthError) {
        let context = route.context, service = context.service
        if let retry = context.limitSignUp(address: request.remoteAddress, account: nil) { return responder.respond(retry.response) }
        let code = try body.string("oobCode")
        route.run(hashing: false, responder) { () throws(AuthError) -> JSONValue in
            let user = try service.verifyEmail(code: code)
            context.authenticator.invalidate(user.uid)
            var fields = AccountService.userInfo(user).objectValue ?? [:]
            fields["kind"] = .string("identitytoolkit#SetAccountInfoResponse")
            return .object(fields)
        }
    }
}
