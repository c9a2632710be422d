import HearthAccounts
import HearthAuth
import HearthHTTP
import HearthJSON

/// The JSON shapes shared by the account endpoints (docs/protocol/auth.md §4.1).
enum AccountResponses {
    static func sessionFields(_ session: Session) -> [JSONKey: JSONValue] {
        var fields: [JSONKey: JSONValue] = [
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
}
