import HearthJSON
import HearthTesting
import Testing

/// `POST /oauth2/v4/token` at the request level: the refusals that come before an
/// assertion is checked, in OAuth2's error shape. Signed assertions are covered end to end
/// with firebase-admin (AdminWritebackEndToEndTests).
@Suite struct AdminGrantLiveTests {
    static let form = [("Content-Type", "application/x-www-form-urlencoded")]
    static let serviceAccount = #"{"client_email": "fn@demo.iam.gserviceaccount.com", "private_key_id": "fn-1", "private_key": "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAz4giXrXgukF8KYCb6xNo\nmfqh9zO5VuTRJtcagyal4n0a1jgBwrrGOnSWXF1OS1i9iqphNAB4cKtUFOmVpeTY\nk8GMBxqbAjGdeIc0GG7cJYxESHcdG3FviXoBSIn90cp5RMCqgAZeH2VjpTUbLX8A\nNc9+Y+zB78TD3EvE6tT+sUp+E7AIU0QCj6qxMSZ8zh5sDZefYl1IysLbWf+Pb2bt\nHF/ZSL2C2xwfZm70CVpFBYrMVpW8gbR5FHrZzyxZPkHOKcjnMho93Fy3P47qx+7I\nUFpk0yxBQ8Bt3VKxDBb360hn8e2ITTpY2MC7gMZZKTPg0Hz5RSS4C+9M0gEBjhHP\nBQIDAQAB\n-----END PUBLIC KEY-----\n"}"#
    static let grant = "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer"

    func error(_ response: (status: Int, body: String)) throws -> (Int, String?, String?) {
        guard case .object(let body) = try JSONParser.parse(Array(response.body.utf8)) else { return (response.status, nil, nil) }
        return (response.status, body["error"]?.stringValue, body["error_description"]?.stringValue)
    }

    @Test func withoutAdminServiceAccountsNothingIsGranted() async throws {
        let server = try LiveServer()
        let answer = try error(server.request("POST", "/oauth2/v4/token", Self.grant + "&assertion=x.y.z", headers: Self.form))
        #expect(answer.0 == 400 && answer.1 == "unauthorized_client")
        #expect(answer.2?.contains("adminServiceAccounts") == true)
        await server.stop()
    }

    @Test func requestsThatAreNotAGrantAreRefused() async throws {
        // One account (only its public key), so the request-level checks are reached.
        let dir = TemporaryDirectory()
        let key = dir.path + "/sa.json"
        try writeFile(key, Self.serviceAccount)
        let live = try LiveServer { $0.adminServiceAccounts = [key] }
        #expect(try error(live.request("GET", "/oauth2/v4/token")).0 == 405)
        #expect(try error(live.request("POST", "/oauth2/v4/token", "grant_type=refresh_token&assertion=x", headers: Self.form)).1 == "unsupported_grant_type")
        #expect(try error(live.request("POST", "/oauth2/v4/token", Self.grant, headers: Self.form)).1 == "invalid_request")
        let tooLarge = Self.grant + "&assertion=" + String(repeating: "a", count: 70 * 1024)
        #expect(try error(live.request("POST", "/oauth2/v4/token", tooLarge, headers: Self.form)).1 == "invalid_request")
        let garbage = try error(live.request("POST", "/oauth2/v4/token", Self.grant + "&assertion=x.y.z", headers: Self.form))
        #expect(garbage.0 == 400 && garbage.1 == "invalid_grant")
        await live.stop()
    }
}
