import HearthAccounts
import HearthAuth
import HearthHTTP
import HearthJSON
import HearthSQLite
import HearthStore
import HearthTesting
import Testing
@testable import HearthServer

/// Who may use the admin accounts endpoints, and which paths they answer.
@Suite struct AdminAccountsAccessTests {
    static let base = "/identitytoolkit.googleapis.com/v1/projects/hearth"

    /// Every admin endpoint with a harmless request.
    static let endpoints: [(method: String, op: String, body: String?)] = [
        ("POST", "", #"{"localId":"new-user"}"#),
        ("POST", ":lookup", #"{"localId":["victim"]}"#),
        ("POST", ":update", #"{"localId":"victim","customAttributes":"{\"role\":\"editor\"}"}"#),
        ("POST", ":delete", #"{"localId":"victim"}"#),
        ("POST", ":batchDelete", #"{"localIds":["victim"],"force":true}"#),
        ("GET", ":batchGet?maxResults=10", nil),
    ]

    static func harness(acceptOwner: Bool) throws -> RouterHarness {
        var settings = AuthSettings()
        settings.acceptEmulatorOwner = acceptOwner
        let h = try RouterHarness(settings: settings)
        let now = SQLiteTreeStore.systemMilliseconds()
        try h.auth.service.accounts.insert(UserRecord(uid: "victim", email: "victim@example.com", provider: .anonymous, createdAt: now, validSince: now / 1000))
        return h
    }

    static func message(_ response: HTTPResponse) -> String? {
        response.json?.objectValue?["error"]?.objectValue?["message"]?.stringValue
    }

    /// Nothing changed: the victim is intact and no user was created.
    static func expectUntouched(_ h: RouterHarness) throws {
        let victim = try #require(try h.auth.service.accounts.user(uid: "victim"))
        #expect(victim.customClaims == nil)
        #expect(try h.auth.service.accounts.user(uid: "new-user") == nil)
    }

    @Test func withoutACredentialEveryEndpointIs401() async throws {
        let h = try Self.harness(acceptOwner: true)
        for endpoint in Self.endpoints {
            let response = await h.send(endpoint.method, Self.base + "/accounts" + endpoint.op, endpoint.body)
            #expect(response.status == 401, "\(endpoint.op)")
            #expect(Self.message(response) == "INSUFFICIENT_PERMISSION : " + AdminAccountsRoute.credentialHelp, "\(endpoint.op)")
            #expect(!response.text.contains("victim@example.com"))
        }
        try Self.expectUntouched(h)
    }

    @Test func aUsersTokenIs403() async throws {
        let h = try Self.harness(acceptOwner: true)
        let user = try h.bearer("someone")
        for endpoint in Self.endpoints {
            let response = await h.send(endpoint.method, Self.base + "/accounts" + endpoint.op, endpoint.body, headers: user)
            #expect(response.status == 403, "\(endpoint.op)")
            #expect(Self.message(response) == "INSUFFICIENT_PERMISSION : only an admin may manage users", "\(endpoint.op)")
            #expect(!response.text.contains("victim@example.com"))
        }
        try Self.expectUntouched(h)
    }

    @Test func bearerOwnerWithoutTheFlagAndBadTokensAre401() async throws {
        let h = try Self.harness(acceptOwner: false)
        for credential in ["Bearer owner", "Bearer not-a-token", "Basic b3duZXI6"] {
            for endpoint in Self.endpoints {
                let response = await h.send(endpoint.method, Self.base + "/accounts" + endpoint.op, endpoint.body, headers: [("Authorization", credential)])
                #expect(response.status == 401, "\(credential) \(endpoint.op)")
                #expect(Self.message(response) == "INSUFFICIENT_PERMISSION : Invalid auth token; " + AdminAccountsRoute.credentialHelp)
            }
        }
        try Self.expectUntouched(h)
    }

    @Test func anOperatorsAdminTokenWorksWithoutTheFlag() async throws {
        let h = try Self.harness(acceptOwner: false)
        let now = SQLiteTreeStore.systemMilliseconds()
        let operatorUser = UserRecord(uid: Authenticator.adminUID, provider: .password, createdAt: now, validSince: 0)
        let token = try h.auth.service.idToken(for: operatorUser, now: now, extraClaims: [JSONKey(Authenticator.adminClaim): .bool(true)])
        let header = [("Authorization", "Bearer \(token)")]
        let lookup = await h.send("POST", Self.base + "/accounts:lookup", #"{"localId":["victim"]}"#, headers: header)
        #expect(lookup.status == 200)
        #expect(lookup.json?.objectValue?["users"]?.arrayValue?.count == 1)
        // Also as the access_token query parameter, as Google APIs take it.
        let viaQuery = await h.send("GET", Self.base + "/accounts:batchGet?maxResults=5&access_token=\(token)")
        #expect(viaQuery.status == 200)
        #expect(viaQuery.json?.objectValue?["users"]?.arrayValue?.count == 1)
    }

    @Test func otherProjectsTenantsAndUnknownOperations() async throws {
        let h = try Self.harness(acceptOwner: true)
        let owner = [("Authorization", "Bearer owner")]
        let other = await h.send("POST", "/identitytoolkit.googleapis.com/v1/projects/elsewhere/accounts:lookup", #"{"localId":["victim"]}"#, headers: owner)
        #expect(other.status == 404)
        #expect(Self.message(other) == "PROJECT_NOT_FOUND : this server's project id is hearth (--project-id)")
        let tenant = await h.send("POST", Self.base + "/tenants/t1/accounts:lookup", #"{"localId":["victim"]}"#, headers: owner)
        #expect(tenant.status == 400)
        #expect(Self.message(tenant) == "TENANT_NOT_FOUND : Hearth has no tenants")
        let unknown = await h.send("POST", Self.base + "/accounts:sendOobCode", "{}", headers: owner)
        #expect(unknown.status == 404)
        #expect(Self.message(unknown) == "NOT_FOUND : accounts:sendOobCode is not implemented by Hearth")
        // Other project-scoped paths fall through to the Identity Toolkit 404.
        #expect(await h.send("GET", Self.base + "/config", headers: owner).status == 404)
        // A project that is not this server's is refused only after the credential check.
        let anonymous = await h.send("POST", "/identitytoolkit.googleapis.com/v1/projects/elsewhere/accounts:lookup", "{}")
        #expect(anonymous.status == 401)
    }

    @Test func aDifferentProjectIDIsTheOneInThePath() async throws {
        var settings = AuthSettings()
        settings.acceptEmulatorOwner = true
        settings.projectID = "demo-proj"
        let h = try RouterHarness(settings: settings)
        let response = await h.send("POST", "/identitytoolkit.googleapis.com/v1/projects/demo-proj/accounts", #"{"localId":"u1"}"#,
                                    headers: [("Authorization", "Bearer owner")])
        #expect(response.status == 200)
        #expect(await h.send("POST", Self.base + "/accounts", #"{"localId":"u2"}"#, headers: [("Authorization", "Bearer owner")]).status == 404)
    }

    @Test func pathParsing() {
        typealias T = AdminAccountsRoute.Target
        #expect(AdminAccountsRoute.target(forPath: "/identitytoolkit.googleapis.com/v1/projects/p/accounts") == T(projectID: "p", operation: ""))
        #expect(AdminAccountsRoute.target(forPath: "/v1/projects/p/accounts:lookup") == T(projectID: "p", operation: "lookup"))
        #expect(AdminAccountsRoute.target(forPath: "/v1/projects/my%2Dproj/accounts:batchGet") == T(projectID: "my-proj", operation: "batchGet"))
        #expect(AdminAccountsRoute.target(forPath: "/v1/projects/p/tenants/t/accounts:update") == T(projectID: "p", tenantID: "t", operation: "update"))
        for path in ["/v1/accounts:lookup", "/v1/projects//accounts", "/v1/projects/p/accounts:", "/v1/projects/p/config",
                     "/v1/projects/p/tenants//accounts", "/v1/projects/p/x/y/accounts", "/v1/projects/p/accounts/extra", "/projects/p/accounts"] {
            #expect(AdminAccountsRoute.target(forPath: path) == nil, "\(path)")
        }
    }
}
