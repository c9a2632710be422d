import Dispatch
import Foundation
import Synchronization
import HearthAuth
import HearthJSON
@testable import HearthServer
import HearthTesting
import Testing
@testable import HearthAccounts

/// `accounts:signInWithIdp` against a local OpenID provider, live: the server on
/// 127.0.0.1 port 0, the provider's keys fetched over HTTP from another loopback port.
@Suite struct IdentityProviderLiveTests {
    static let providerID = "oidc.test"
    static let audience = "com.example.app"

    /// A providers file naming `provider` as `oidc.test` (and as `apple.com`), in `directory`.
    static func providersFile(_ provider: TestOpenIDProvider, in directory: String, extra: String = "") throws -> String {
        let path = directory + "/providers.json"
        try writeFile(path, """
            {"providers": [
              {"providerId": "oidc.test", "issuer": "\(provider.issuer)", "audiences": ["\(audience)"], "jwksURL": "\(provider.jwksURL)"},
              {"providerId": "apple.com", "issuer": "\(provider.issuer)", "audiences": ["\(audience)"], "jwksURL": "\(provider.jwksURL)"}\(extra)
            ]}
            """)
        return path
    }

    static func server(_ provider: TestOpenIDProvider, rules: String = #"{"rules": {".read": true, ".write": true}}"#, extra: String = "",
                       configure: @escaping (inout HearthConfiguration) -> Void = { _ in }) throws -> LiveServer {
        let files = TemporaryDirectory(prefix: "hearth-idp")
        let path = try providersFile(provider, in: files.path, extra: extra)
        return try LiveServer(rules: rules) { configuration in
            configuration.auth.identityProvidersPath = path
            configure(&configuration)
            _ = files  // kept until the server has read the file
        }
    }

    static func signIn(_ server: LiveServer, token: String, provider: String = providerID, nonce: String? = nil,
                       idToken: String? = nil) throws -> (status: Int, json: [JSONKey: JSONValue]) {
        var postBody = "id_token=\(token)&providerId=\(provider)"
        if let nonce { postBody += "&nonce=\(nonce)" }
        var body: [JSONKey: JSONValue] = ["postBody": .string(postBody), "requestUri": "http://localhost", "returnSecureToken": true,
                                          "returnIdpCredential": true]
        if let idToken { body["idToken"] = .string(idToken) }
        let response = try server.request("POST", "/v1/accounts:signInWithIdp?key=k", JSONWriter.string(.object(body)),
                                          headers: [("Content-Type", "application/json")])
        return (response.status, try JSONParser.parse(Array(response.body.utf8)).objectValue ?? [:])
    }

    static func errorMessage(_ json: [JSONKey: JSONValue]) -> String? {
        json["error"]?.objectValue?["message"]?.stringValue
    }

    static func lookup(_ server: LiveServer, idToken: String) throws -> [JSONKey: JSONValue] {
        let response = try server.request("POST", "/v1/accounts:lookup", #"{"idToken":"\#(idToken)"}"#, headers: [("Content-Type", "application/json")])
        return try JSONParser.parse(Array(response.body.utf8)).objectValue?["users"]?.arrayValue?.first?.objectValue ?? [:]
    }

    /// The claims of a JWT, unverified.
    static func claims(_ token: String) -> [JSONKey: JSONValue] {
        var part = String(token.split(separator: ".")[1]).replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while part.count % 4 != 0 { part += "=" }
        return (try? JSONParser.parse(Array(Data(base64Encoded: part) ?? Data())))?.objectValue ?? [:]
    }

    @Test func signInCreatesTheUserThenSignsTheSameUserIn() async throws {
        let provider = try TestOpenIDProvider()
        let server = try Self.server(provider, rules: #"{"rules": {"$uid": {".write": "auth.token.firebase.sign_in_provider == 'oidc.test' && auth.uid == $uid", ".read": true}}}"#)
        let first = try Self.signIn(server, token: provider.mint())
        #expect(first.status == 200, "\(first.json)")
        #expect(first.json["isNewUser"] == .bool(true))
        #expect(first.json["providerId"] == "oidc.test")
        #expect(first.json["federatedId"] == "provider-user-1")
        #expect(first.json["email"] == "provider-user-1@example.com")
        #expect(first.json["emailVerified"] == .bool(true))
        #expect(first.json["displayName"] == "Provider User")
        #expect(first.json["oauthIdToken"]?.stringValue?.isEmpty == false)
        #expect(first.json["rawUserInfo"]?.stringValue?.contains("provider-user-1") == true)
        let uid = try #require(first.json["localId"]?.stringValue)
        let idToken = try #require(first.json["idToken"]?.stringValue)
        let firebase = Self.claims(idToken)["firebase"]?.objectValue
        #expect(firebase?["sign_in_provider"] == "oidc.test")
        #expect(firebase?["identities"]?.objectValue?["oidc.test"] == ["provider-user-1"])

        let again = try Self.signIn(server, token: provider.mint())
        #expect(again.json["isNewUser"] == .bool(false))
        #expect(again.json["localId"]?.stringValue == uid)

        let user = try Self.lookup(server, idToken: idToken)
        let links = user["providerUserInfo"]?.arrayValue ?? []
        #expect(links.count == 1)
        #expect(links.first?.objectValue?["providerId"] == "oidc.test")
        #expect(links.first?.objectValue?["rawId"] == "provider-user-1")

        // The rules see the provider.
        #expect(try server.request("PUT", "/\(uid).json?auth=\(idToken)", "1").status == 200)
        let anonymous = try server.anonymousUser()
        #expect(try server.request("PUT", "/\(anonymous.uid).json?auth=\(anonymous.token)", "1").status == 401)
        await server.stop()
    }

    @Test func anES256TokenSignsIn() async throws {
        let provider = try TestOpenIDProvider()
        let server = try Self.server(provider)
        let result = try Self.signIn(server, token: provider.mint(sub: "ec-user", key: provider.ec))
        #expect(result.status == 200, "\(result.json)")
        #expect(result.json["federatedId"] == "ec-user")
        await server.stop()
    }

    /// One refusal each: the token, the reason after `INVALID_IDP_RESPONSE : `.
    enum Refusal: String, CaseIterable {
        case wrongIssuer, wrongAudience, expired, issuedInFuture, badSignature, algorithmHS256, algorithmNone, unknownKey,
             malformed, missingSubject, nonceMissing, nonceMismatch, nonceUnexpected, noIDToken, accessTokenOnly
    }

    @Test(arguments: Refusal.allCases) func everyRefusalIsInvalidIdPResponseWithItsReason(_ refusal: Refusal) async throws {
        let provider = try TestOpenIDProvider()
        let server = try Self.server(provider)
        let now = Int(Date().timeIntervalSince1970)
        let good = provider.mint()
        let expected: String
        var token = good
        var nonce: String?
        var postBody: String?
        switch refusal {
        case .wrongIssuer:
            token = provider.mint(overrides: ["iss": "https://evil.example.com"])
            expected = ProviderTokenFailure.wrongIssuer.description
        case .wrongAudience:
            token = provider.mint(audience: "com.other.app")
            expected = ProviderTokenFailure.wrongAudience.description
        case .expired:
            token = provider.mint(overrides: ["iat": now - 7200, "exp": now - 3600])
            expected = ProviderTokenFailure.expired.description
        case .issuedInFuture:
            token = provider.mint(overrides: ["iat": now + 3600, "exp": now + 7200])
            expected = ProviderTokenFailure.issuedInFuture.description
        case .badSignature:
            let parts = good.split(separator: ".")
            token = parts[0] + "." + TestOpenIDProvider.Key.b64(Array(#"{"sub":"someone-else","aud":"com.example.app"}"#.utf8)) + "." + parts[2]
            expected = ProviderTokenFailure.badSignature.description
        case .algorithmHS256:
            token = provider.mint(header: ["alg": "HS256"])
            expected = ProviderTokenFailure.unsupportedAlgorithm.description
        case .algorithmNone:
            let parts = provider.mint(header: ["alg": "none"]).split(separator: ".")
            token = parts[0] + "." + parts[1] + "."
            expected = ProviderTokenFailure.unsupportedAlgorithm.description
        case .unknownKey:
            token = provider.mint(key: TestOpenIDProvider.newKey(ec: false, kid: "unknown"))
            expected = ProviderTokenFailure.unknownKeyID.description
        case .malformed:
            token = "not-a-jwt"
            expected = ProviderTokenFailure.malformed.description
        case .missingSubject:
            token = provider.mint(overrides: ["sub": nil])
            expected = ProviderTokenFailure.invalidSubject.description
        case .nonceMissing:
            token = provider.mint(overrides: ["nonce": TestOpenIDProvider.sha256Hex("raw-nonce")])
            expected = "the id_token has a nonce: send the raw nonce"
        case .nonceMismatch:
            token = provider.mint(overrides: ["nonce": TestOpenIDProvider.sha256Hex("raw-nonce")])
            nonce = "another-nonce"
            expected = "the nonce does not match the id_token's (its SHA-256 in hex)"
        case .nonceUnexpected:
            nonce = "raw-nonce"
            expected = "the id_token has no nonce, but one was sent"
        case .noIDToken:
            postBody = "providerId=oidc.test"
            expected = "postBody has no id_token"
        case .accessTokenOnly:
            postBody = "access_token=abc&providerId=oidc.test"
            expected = "only an id_token is accepted (not an access_token or code)"
        }
        let result: (status: Int, json: [JSONKey: JSONValue])
        if let postBody {
            let response = try server.request("POST", "/v1/accounts:signInWithIdp", #"{"postBody":"\#(postBody)","requestUri":"http://localhost"}"#,
                                              headers: [("Content-Type", "application/json")])
            result = (response.status, try JSONParser.parse(Array(response.body.utf8)).objectValue ?? [:])
        } else {
            result = try Self.signIn(server, token: token, nonce: nonce)
        }
        #expect(result.status == 400)
        #expect(Self.errorMessage(result.json) == "INVALID_IDP_RESPONSE : " + expected)
        await server.stop()
    }

    @Test func anUnconfiguredProviderIsOperationNotAllowed() async throws {
        let provider = try TestOpenIDProvider()
        let server = try Self.server(provider)
        let result = try Self.signIn(server, token: provider.mint(), provider: "google.com")
        #expect(result.status == 400)
        #expect(Self.errorMessage(result.json)?.hasPrefix("OPERATION_NOT_ALLOWED") == true)
        await server.stop()
    }

    @Test func appleNonceIsTheSHA256HexOfTheRawNonce() async throws {
        let provider = try TestOpenIDProvider()
        let server = try Self.server(provider)
        let token = provider.mint(sub: "apple-user", overrides: ["nonce": TestOpenIDProvider.sha256Hex("raw-nonce-123"), "email_verified": "true"])
        let result = try Self.signIn(server, token: token, provider: "apple.com", nonce: "raw-nonce-123")
        #expect(result.status == 200, "\(result.json)")
        #expect(result.json["providerId"] == "apple.com")
        #expect(result.json["emailVerified"] == .bool(true))
        await server.stop()
    }

    @Test func linkingAnAnonymousUserKeepsTheUIDAndAnotherUserCannotTakeTheLink() async throws {
        let provider = try TestOpenIDProvider()
        let server = try Self.server(provider)
        let anonymous = try server.anonymousUser()
        let linked = try Self.signIn(server, token: provider.mint(sub: "linker"), idToken: anonymous.token)
        #expect(linked.status == 200, "\(linked.json)")
        #expect(linked.json["localId"]?.stringValue == anonymous.uid)
        let idToken = try #require(linked.json["idToken"]?.stringValue)
        let user = try Self.lookup(server, idToken: idToken)
        #expect(user["providerUserInfo"]?.arrayValue?.first?.objectValue?["rawId"] == "linker")
        #expect(user["email"] == "linker@example.com")
        // Signing in with the provider now reaches the same user.
        #expect(try Self.signIn(server, token: provider.mint(sub: "linker")).json["localId"]?.stringValue == anonymous.uid)
        // Another user cannot link the same provider account.
        let other = try server.anonymousUser()
        let refused = try Self.signIn(server, token: provider.mint(sub: "linker"), idToken: other.token)
        #expect(refused.status == 400)
        #expect(Self.errorMessage(refused.json) == "FEDERATED_USER_ID_ALREADY_LINKED")
        await server.stop()
    }

    @Test func unlinkingWithDeleteProviderRemovesTheLink() async throws {
        let provider = try TestOpenIDProvider()
        let server = try Self.server(provider)
        let anonymous = try server.anonymousUser()
        let linked = try Self.signIn(server, token: provider.mint(sub: "unlinker"), idToken: anonymous.token)
        let idToken = try #require(linked.json["idToken"]?.stringValue)
        let response = try server.request("POST", "/v1/accounts:update", #"{"idToken":"\#(idToken)","deleteProvider":["oidc.test"]}"#,
                                          headers: [("Content-Type", "application/json")])
        #expect(response.status == 200, "\(response.body)")
        #expect(try Self.lookup(server, idToken: idToken)["providerUserInfo"]?.arrayValue?.contains { $0.objectValue?["providerId"] == "oidc.test" } == false)
        let fresh = try Self.signIn(server, token: provider.mint(sub: "unlinker", overrides: ["email": nil]))
        #expect(fresh.json["isNewUser"] == .bool(true))
        #expect(fresh.json["localId"]?.stringValue != anonymous.uid)
        await server.stop()
    }

    @Test func anExistingEmailNeedsConfirmationAndSignsNobodyIn() async throws {
        let provider = try TestOpenIDProvider()
        let server = try Self.server(provider)
        let up = try server.request("POST", "/v1/accounts:signUp", #"{"email":"taken@example.com","password":"secret1"}"#,
                                    headers: [("Content-Type", "application/json")])
        #expect(up.status == 200)
        let result = try Self.signIn(server, token: provider.mint(sub: "taken"))
        #expect(result.status == 200)
        #expect(result.json["needConfirmation"] == .bool(true))
        #expect(result.json["idToken"] == nil)
        #expect(result.json["email"] == "taken@example.com")
        await server.stop()
    }

    @Test func aProviderThatDoesNotAnswerFailsTheSignInAfterTheTimeout() async throws {
        let provider = try TestOpenIDProvider()
        provider.hang(true)
        let server = try Self.server(provider)
        let result = try Self.signIn(server, token: provider.mint())
        #expect(result.status == 400)
        #expect(Self.errorMessage(result.json) == "INVALID_IDP_RESPONSE : the provider's keys could not be fetched")
        await server.stop()
    }

    /// A key URL that accepts and never answers holds only the tokens that need its keys:
    /// with 16 junk RS256 tokens of random `kid`s waiting on the Firebase project's keys
    /// (the key URL holds the background fetch the server starts with, and the tokens'
    /// fetch waits behind it), a valid Hearth token not yet cached is answered while those
    /// fetches are still pending (the listener has not let go, and none of the junk requests
    /// is answered). The fetch timeout is an hour here, so that the fetches are still
    /// pending however slowly a loaded machine runs the test; `stalled.release()` ends them.
    @Test func aKeyURLThatNeverAnswersDoesNotHoldOtherTokens() async throws {
        let stalled = try StalledListener()
        defer { stalled.stop() }
        let provider = try TestOpenIDProvider()
        let server = try Self.server(provider, rules: #"{"rules": {"$uid": {".read": "auth.uid === $uid"}}}"#,
                                     extra: #", {"providerId": "firebase", "projectId": "my-project", "jwksURL": "http://127.0.0.1:\#(stalled.port)/certs"}"#) {
            $0.auth.identityProviderFetchTimeoutSeconds = 3600
        }
        let (uid, hearthToken) = try server.anonymousUser()
        let providers = try #require(server.service.identityProviders)

        let junk = 16
        let answers = Mutex<[Int]>([])
        let finished = DispatchGroup()
        for _ in 0..<junk {
            let token = provider.mint(sub: "x", audience: "my-project", overrides: ["iss": "https://securetoken.google.com/my-project"],
                                      header: ["kid": "junk-\(UInt64.random(in: 0...UInt64.max))"])
            finished.enter()
            Thread.detachNewThread {
                let status = (try? server.request("GET", "/x.json?auth=\(token)").status) ?? -1
                answers.withLock { $0.append(status) }
                finished.leave()
            }
        }
        try pollUntil("the junk tokens waiting on the fetch") {
            stalled.accepted == 1 && providers.waitingForKeys(provider: IdentityProvider.firebase) == junk
        }
        let valid = try server.request("GET", "/\(uid).json", headers: [("Authorization", "Bearer \(hearthToken)")])
        #expect(valid.status == 200, "\(valid)")
        // Another provider's sign-in (its keys fetched from a provider that answers) too.
        let other = try Self.signIn(server, token: provider.mint())
        #expect(other.status == 200, "\(other.json)")
        #expect(answers.withLock { $0 }.isEmpty, "the key fetch was still pending when the Hearth token was answered")
        #expect(providers.waitingForKeys(provider: IdentityProvider.firebase) == junk)
        #expect(stalled.accepted == 1, "one connection held, the tokens' fetch waiting behind it")

        stalled.release()  // the key URL closes the connection: the fetch fails, the waiting tokens are refused
        #expect(finished.wait(timeout: .now() + .seconds(60)) == .success)
        #expect(answers.withLock { $0 } == Array(repeating: 401, count: junk))
        #expect(providers.waitingForKeys(provider: IdentityProvider.firebase) == 0)
        await server.stop()
    }

    @Test func keysCachedOnDiskVerifyAfterARestartWithoutTheProvider() async throws {
        let provider = try TestOpenIDProvider()
        let data = TemporaryDirectory(prefix: "hearth-idp-data")
        let first = try Self.server(provider) { $0.dataDirectory = data.path }
        #expect(try Self.signIn(first, token: provider.mint()).status == 200)
        let storeURL = first.service.configuration.storeURL
        await first.stop()
        provider.hang(true)
        let second = try Self.server(provider) { configuration in
            configuration.dataDirectory = data.path
            configuration.storeURL = storeURL
        }
        let result = try Self.signIn(second, token: provider.mint())
        #expect(result.status == 200, "\(result.json)")
        #expect(result.json["isNewUser"] == .bool(false))
        await second.stop()
    }

    @Test func firebaseAdminLookupFindsTheUserByProviderUID() async throws {
        let provider = try TestOpenIDProvider()
        let server = try Self.server(provider) { $0.auth.acceptEmulatorOwner = true }
        let result = try Self.signIn(server, token: provider.mint(sub: "admin-visible"))
        let uid = try #require(result.json["localId"]?.stringValue)
        let response = try server.request("POST", "/v1/projects/hearth/accounts:lookup",
                                          #"{"federatedUserId":[{"providerId":"oidc.test","rawId":"admin-visible"}]}"#,
                                          headers: [("Content-Type", "application/json"), ("Authorization", "Bearer owner")])
        #expect(response.status == 200, "\(response.body)")
        let users = try JSONParser.parse(Array(response.body.utf8)).objectValue?["users"]?.arrayValue ?? []
        #expect(users.first?.objectValue?["localId"]?.stringValue == uid)
        await server.stop()
    }

    @Test func aPostBodyLongerThanTheLimitIsRefused() async throws {
        let provider = try TestOpenIDProvider()
        let server = try Self.server(provider)
        let long = String(repeating: "x", count: SignInWithIdpEndpoint.maxPostBodyBytes)
        let response = try server.request("POST", "/v1/accounts:signInWithIdp", #"{"postBody":"id_token=\#(long)","requestUri":"http://localhost"}"#,
                                          headers: [("Content-Type", "application/json")])
        #expect(response.status == 400)
        #expect(response.body.contains("INVALID_IDP_RESPONSE : postBody is longer than \(SignInWithIdpEndpoint.maxPostBodyBytes) bytes"))
        await server.stop()
    }

    @Test func aFirebaseProjectsIDTokenIsAUserOfTheDatabaseAndItsRules() async throws {
        let provider = try TestOpenIDProvider()
        let server = try Self.server(provider, rules: #"{"rules": {"$uid": {".write": "auth.uid == $uid && auth.token.firebase.sign_in_provider == 'google.com'", ".read": "auth != null"}}}"#,
                                     extra: #", {"providerId": "firebase", "projectId": "my-project", "jwksURL": "\#(provider.certificatesURL)"}"#)
        let now = Int(Date().timeIntervalSince1970)
        let token = provider.mint(sub: "firebase-uid-1", audience: "my-project", overrides: [
            "iss": "https://securetoken.google.com/my-project", "user_id": "firebase-uid-1", "auth_time": now,
            "firebase": ["sign_in_provider": "google.com", "identities": ["google.com": ["1234"]]],
        ])
        #expect(try server.request("PUT", "/firebase-uid-1.json?auth=\(token)", "1").status == 200)
        #expect(try server.request("PUT", "/someone-else.json?auth=\(token)", "1").status == 401)
        #expect(try server.request("GET", "/firebase-uid-1.json", headers: [("Authorization", "Bearer \(token)")]).body == "1")
        // Another project's token, and an expired one, are refused.
        let other = provider.mint(sub: "x", audience: "other-project", overrides: ["iss": "https://securetoken.google.com/other-project"])
        #expect(try server.request("GET", "/x.json?auth=\(other)").status == 401)
        let expired = provider.mint(sub: "firebase-uid-1", audience: "my-project",
                                    overrides: ["iss": "https://securetoken.google.com/my-project", "iat": now - 7200, "exp": now - 3600])
        let refused = try server.request("GET", "/firebase-uid-1.json?auth=\(expired)")
        #expect(refused.status == 401)
        #expect(refused.body.contains("expired"))
        // Not a provider to sign in with.
        let result = try Self.signIn(server, token: token, provider: "firebase")
        #expect(Self.errorMessage(result.json)?.hasPrefix("OPERATION_NOT_ALLOWED") == true)
        await server.stop()
    }
}
