import HearthAccounts
import HearthAuth
import HearthHTTP
import HearthJSON

/// `POST …/projects/P/accounts` (Admin SDK `create_user`): `localId` (optional),
/// `email`, `password`, `displayName`, `photoUrl`, `emailVerified`, `disabled`. Answers
/// `localId` (the SDK then looks the user up). `DUPLICATE_LOCAL_ID`, `EMAIL_EXISTS`.
enum AdminCreateEndpoint {
    static func handle(_ body: AuthRequestBody, route: AccountsRoute, responder: HTTPResponder) throws(AuthError) {
        if try body.string("phoneNumber") != nil { return responder.respond(AuthError.phoneNumbersUnsupported.response) }
        var new = AccountService.NewUser()
        new.uid = try body.string("localId")
        new.email = try body.string("email")
        new.password = try body.string("password")
        new.displayName = try body.string("displayName")
        new.photoURL = try body.string("photoUrl")
        new.emailVerified = try body.bool("emailVerified") ?? false
        new.disabled = try body.bool("disabled") ?? false
        let service = route.context.service
        route.run(hashing: new.password != nil, responder) { [new] () throws(AuthError) -> JSONValue in
            let user = try service.createUser(new)
            var fields: [JSONKey: JSONValue] = ["kind": .string("identitytoolkit#SignupNewUserResponse"), "localId": .string(user.uid)]
            if let email = user.email { fields["email"] = .string(email) }
            if let name = user.displayName { fields["displayName"] = .string(name) }
            return .object(fields)
        }
    }
}

extension AuthError {
    /// Hearth keeps no phone numbers: refused rather than silently dropped.
    static let phoneNumbersUnsupported = AuthError("OPERATION_NOT_ALLOWED", detail: "Hearth does not support phone numbers")
}
