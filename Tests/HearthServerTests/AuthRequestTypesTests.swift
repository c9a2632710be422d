import HearthAccounts
import HearthAuth
import HearthHTTP
import HearthJSON
import HearthTesting
import Testing
@testable import HearthServer

/// A field of an Identity Toolkit or Secure Token request holding the wrong JSON type is
/// a 400 `INVALID_JSON_PAYLOAD` naming the field and the type given (never the value, which
/// may be a secret), never read as absent: read as absent, `{"email": 1}` on signUp would
/// make an anonymous account.
@Suite struct AuthRequestTypesTests {
    let h: RouterHarness
    static let admin = "/identitytoolkit.googleapis.com/v1/projects/hearth/accounts"
    static let owner = [("Authorization", "Bearer owner"), ("Content-Type", "application/json")]

    init() throws {
        var settings = AuthSettings()
        settings.acceptEmulatorOwner = true
        h = try RouterHarness(settings: settings)
    }

    func message(_ response: HTTPResponse) -> String? {
        response.json?.objectValue?["error"]?.objectValue?["message"]?.stringValue
    }

    func accounts() async -> Int {
        let page = await h.send("GET", Self.admin + ":batchGet?maxResults=1000", headers: Self.owner)
        return page.json?.objectValue?["users"]?.arrayValue?.count ?? 0
    }

    @Test func aFieldOfTheWrongTypeIsRefusedNamingItAndNothingIsDone() async throws {
        let json = [("Content-Type", "application/json")]
        let cases: [(path: String, body: String, detail: String)] = [
            ("/v1/accounts:signUp", #"{"email":1}"#, "Invalid value at 'email' (TYPE_STRING): a number"),
            ("/v1/accounts:signUp", #"{"email":1,"password":"secret123"}"#, "Invalid value at 'email' (TYPE_STRING): a number"),
            ("/v1/accounts:signUp", #"{"email":"a@example.com","password":"secret123","displayName":{"a":1}}"#,
             "Invalid value at 'display_name' (TYPE_STRING): an object"),
            ("/v1/accounts:signUp", #"{"email":"a@example.com","password":true}"#, "Invalid value at 'password' (TYPE_STRING): a boolean"),
            // The value is never echoed: a password or a token may be in it.
            ("/v1/accounts:signInWithPassword", #"{"email":"a@example.com","password":["hunter2secret"]}"#,
             "Invalid value at 'password' (TYPE_STRING): an array"),
            ("/v1/accounts:sendOobCode", #"{"requestType":7,"email":"a@example.com"}"#, "Invalid value at 'request_type' (TYPE_STRING): a number"),
            ("/v1/accounts:update", #"{"oobCode":{}}"#, "Invalid value at 'oob_code' (TYPE_STRING): an object"),
            ("/v1/token", #"{"grant_type":"refresh_token","refresh_token":12}"#, "Invalid value at 'refresh_token' (TYPE_STRING): a number"),
        ]
        for (path, body, detail) in cases {
            let response = await h.send("POST", path, body, headers: json)
            #expect(response.status == 400, "\(path) \(body): \(response.text)")
            #expect(message(response) == "INVALID_JSON_PAYLOAD : " + detail, "\(path) \(body)")
            #expect(!response.text.contains("hunter2secret"), "\(path): the value is not echoed")
        }
        #expect(await accounts() == 0, "no account was made")
        // The admin API's fields too: a repeated field's items, a boolean, an integer.
        let admin: [(op: String, body: String, detail: String)] = [
            (":lookup", #"{"localId":["ok",1]}"#, "Invalid value at 'local_id' (TYPE_STRING): a number"),
            ("", #"{"email":"b@example.com","emailVerified":"yes"}"#, "Invalid value at 'email_verified' (TYPE_BOOL): a string"),
            (":update", #"{"localId":"u","validSince":[1]}"#, "Invalid value at 'valid_since' (TYPE_INT64): an array"),
            (":lookup", #"{"federatedUserId":"google.com"}"#, "Invalid value at 'federated_user_id' (TYPE_MESSAGE): a string"),
            (":lookup", #"{"federatedUserId":[{"providerId":"google.com"}]}"#,
             #"each federatedUserId must be {"providerId": string, "rawId": string}"#),
        ]
        for (op, body, detail) in admin {
            let response = await h.send("POST", Self.admin + op, body, headers: Self.owner)
            #expect(response.status == 400, "\(op) \(body): \(response.text)")
            #expect(message(response) == "INVALID_JSON_PAYLOAD : " + detail, "\(op) \(body)")
        }
        #expect(await accounts() == 0, "no account was made")
    }

    /// The admin grant (`/oauth2/v4/token`) answers in OAuth2's shape: `invalid_request`
    /// naming the field.
    @Test func anAdminGrantWithAFieldOfTheWrongTypeIsAnInvalidRequest() async throws {
        let dir = TemporaryDirectory()
        let key = dir.path + "/sa.json"
        try writeFile(key, AdminGrantLiveTests.serviceAccount)
        let live = try LiveServer { $0.adminServiceAccounts = [key] }
        let body = #"{"grant_type":"urn:ietf:params:oauth:grant-type:jwt-bearer","assertion":5}"#
        let answer = try AdminGrantLiveTests().error(live.request("POST", "/oauth2/v4/token", body,
                                                                  headers: [("Content-Type", "application/json")]))
        await live.stop()
        #expect(answer.0 == 400 && answer.1 == "invalid_request", "\(answer)")
        #expect(answer.2 == "Invalid value at 'assertion' (TYPE_STRING): a number")
    }

    /// `null` is an absent field (proto3's JSON mapping), and a boolean may come as the
    /// string `"true"`; what the SDKs send is taken as before.
    @Test func nullsAreAbsentAndTheSDKsShapesStillWork() async throws {
        let json = [("Content-Type", "application/json")]
        let anonymous = await h.send("POST", "/v1/accounts:signUp", #"{"email":null,"password":null,"returnSecureToken":true}"#, headers: json)
        #expect(anonymous.status == 200, "\(anonymous.text)")
        let email = await h.send("POST", "/v1/accounts:signUp",
                                 #"{"email":"c@example.com","password":"secret123","displayName":"C","returnSecureToken":true}"#, headers: json)
        #expect(email.status == 200, "\(email.text)")
        let signIn = await h.send("POST", "/v1/accounts:signInWithPassword",
                                  #"{"email":"c@example.com","password":"secret123","returnSecureToken":"true"}"#, headers: json)
        #expect(signIn.status == 200, "\(signIn.text)")
        #expect(await accounts() == 2)
    }
}
