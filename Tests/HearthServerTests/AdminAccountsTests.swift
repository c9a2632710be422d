import HearthAuth
import HearthHTTP
import HearthJSON
import HearthRules
import HearthSQLite
import HearthStore
import HearthTesting
import Testing
@testable import HearthAccounts
@testable import HearthServer

/// The Admin SDKs' user management endpoints (`…/projects/P/accounts…`,
/// docs/protocol/admin-client.md §7), in-process, as `Bearer owner` with
/// `--accept-emulator-owner`.
@Suite struct AdminAccountsTests {
    let h: RouterHarness

    /// `/staff` readable by tokens whose custom claim `role` is `editor`.
    static let rules = #"{"rules": {"staff": {".read": "auth.token.role == 'editor'"}, "open": {".read": true}}}"#
    static let base = "/identitytoolkit.googleapis.com/v1/projects/hearth"
    static let owner = [("Authorization", "Bearer owner"), ("Content-Type", "application/json")]

    init() throws {
        var settings = AuthSettings()
        settings.acceptEmulatorOwner = true
        h = try RouterHarness(policy: RulesAccessPolicy(rules: try RuleSet.compile(Self.rules)), settings: settings)
    }

    func admin(_ op: String, _ body: String? = nil, method: String = "POST", base: String = AdminAccountsTests.base) async -> HTTPResponse {
        await h.send(method, base + "/accounts" + op, body, headers: Self.owner)
    }

    func create(_ body: String) async throws -> String {
        let response = await admin("", body)
        #expect(response.status == 200, "\(response.text)")
        return try #require(response.json?.objectValue?["localId"]?.stringValue)
    }

    func lookup(uid: String) async -> [JSONKey: JSONValue]? {
        await admin(":lookup", #"{"localId":["\#(uid)"]}"#).json?.objectValue?["users"]?.arrayValue?.first?.objectValue
    }

    func signIn(_ email: String, _ password: String) async -> HTTPResponse {
        await h.send("POST", "/v1/accounts:signInWithPassword", #"{"email":"\#(email)","password":"\#(password)","returnSecureToken":true}"#)
    }

    static func field(_ response: HTTPResponse, _ name: String) -> String? { response.json?.objectValue?[name]?.stringValue }

    // MARK: Create and lookup

    @Test func createThenLookupByUIDAndEmailShowsTheSDKsFields() async throws {
        let startedAt = SQLiteTreeStore.systemMilliseconds()
        let created = await admin("", #"{"email":"Ann@Example.com","password":"secret1","displayName":"Ann","photoUrl":"https://example.com/a.png","emailVerified":true}"#)
        #expect(created.status == 200)
        #expect(Self.field(created, "kind") == "identitytoolkit#SignupNewUserResponse")
        #expect(Self.field(created, "email") == "ann@example.com")
        #expect(created.json?.objectValue?["idToken"] == nil)  // an admin create starts no session
        let uid = try #require(Self.field(created, "localId"))
        #expect(uid.count == 28)

        let byUID = await admin(":lookup", #"{"localId":["\#(uid)"]}"#)
        #expect(byUID.status == 200)
        #expect(Self.field(byUID, "kind") == "identitytoolkit#GetAccountInfoResponse")
        let user = try #require(byUID.json?.objectValue?["users"]?.arrayValue?.first?.objectValue)
        #expect(user["localId"] == .string(uid))
        #expect(user["email"] == .string("ann@example.com"))
        #expect(user["emailVerified"] == .bool(true))
        #expect(user["displayName"] == .string("Ann"))
        #expect(user["photoUrl"] == .string("https://example.com/a.png"))
        #expect(user["disabled"] == .bool(false))
        let created_ = try #require(user["createdAt"]?.stringValue.flatMap { Int64($0) })
        #expect(created_ >= startedAt && created_ <= SQLiteTreeStore.systemMilliseconds())
        #expect(user["validSince"] == .string(String(created_ / 1000)))
        #expect(user["passwordUpdatedAt"] == .int(created_))
        #expect(user["providerUserInfo"] == .array([.object([
            "providerId": "password", "email": "ann@example.com", "federatedId": "ann@example.com", "rawId": "ann@example.com"])]))
        #expect(user["customAttributes"] == nil)
        // Hearth's scrypt hashes never leave the server.
        #expect(user["passwordHash"] == nil && user["salt"] == nil)
        #expect(!byUID.text.contains("scrypt"))

        // By email as typed (the SDK sends it so), and on the path without the prefix.
        let byEmail = await admin(":lookup", #"{"email":["ANN@example.com"]}"#, base: "/v1/projects/hearth")
        #expect(byEmail.json?.objectValue?["users"] == byUID.json?.objectValue?["users"])
        // The user signs in with the password the admin set; the sign-in shows as lastLoginAt.
        #expect(user["lastLoginAt"] == nil)
        #expect(await signIn("ann@example.com", "secret1").status == 200)
        let lastLogin = try #require(await lookup(uid: uid)?["lastLoginAt"]?.stringValue.flatMap { Int64($0) })
        #expect(lastLogin >= created_)
    }

    @Test func createErrors() async throws {
        _ = try await create(#"{"localId":"user-1","email":"a@example.com","password":"secret1"}"#)
        func code(_ body: String) async -> String? {
            await admin("", body).json?.objectValue?["error"]?.objectValue?["message"]?.stringValue
        }
        #expect(await code(#"{"localId":"user-1"}"#) == "DUPLICATE_LOCAL_ID")
        #expect(await code(#"{"email":"A@example.com","password":"secret1"}"#) == "EMAIL_EXISTS")
        #expect(await code(#"{"email":"b@example.com","password":"12345"}"#) == "WEAK_PASSWORD : Password should be at least 6 characters")
        #expect(await code(#"{"email":"not-an-email","password":"secret1"}"#) == "INVALID_EMAIL")
        #expect(await code(#"{"localId":"\#(String(repeating: "u", count: 129))"}"#)?.hasPrefix("INVALID_LOCAL_ID") == true)
        #expect(await code(#"{"localId":"hearth-admin"}"#) == "INVALID_LOCAL_ID : hearth-admin is reserved")
        #expect(await code(#"{"phoneNumber":"+15555550100"}"#) == "OPERATION_NOT_ALLOWED : Hearth does not support phone numbers")
        #expect(await code("{not json") == "INVALID_JSON_PAYLOAD : the body must be a JSON object")
        // 128 characters is fine, as in Firebase.
        _ = try await create(#"{"localId":"\#(String(repeating: "u", count: 128))"}"#)
    }

    @Test func aUserWithoutEmailAndPasswordHasNoProvider() async throws {
        let uid = try await create(#"{"displayName":"Nobody","disabled":true}"#)
        let user = try #require(await lookup(uid: uid))
        #expect(user["providerUserInfo"] == .array([]))
        #expect(user["disabled"] == .bool(true))
        #expect(user["email"] == nil)
        #expect(try h.auth.service.accounts.user(uid: uid)?.provider == .anonymous)
    }

    @Test func lookupWithoutMatchLeavesOutUsersAndManyIdentifiersKeepTheirOrder() async throws {
        let none = await admin(":lookup", #"{"localId":["nobody"],"email":["nobody@example.com"],"phoneNumber":["+15555550100"]}"#)
        #expect(none.status == 200)
        #expect(none.json == .object(["kind": "identitytoolkit#GetAccountInfoResponse"]))

        let a = try await create(#"{"localId":"a","email":"a@example.com","password":"secret1"}"#)
        let b = try await create(#"{"localId":"b"}"#)
        let both = await admin(":lookup", #"{"localId":["b","zzz","a"],"email":["a@example.com"]}"#)
        #expect(both.json?.objectValue?["users"]?.arrayValue?.compactMap { $0.objectValue?["localId"]?.stringValue } == [b, a])

        let many = (0...AdminLookupEndpoint.maxIdentifiers).map { #""u\#($0)""# }.joined(separator: ",")
        let tooMany = await admin(":lookup", #"{"localId":[\#(many)]}"#)
        #expect(tooMany.status == 400)
        #expect(tooMany.json?.objectValue?["error"]?.objectValue?["message"]?.stringValue == "INVALID_ARGUMENT : at most 100 identifiers in one lookup")
        #expect(AdminLookupEndpoint.maxIdentifiers == 100)
    }

    // MARK: Update

    @Test func updateChangesTheFieldsTheSDKSends() async throws {
        let uid = try await create(#"{"email":"c@example.com","password":"secret1","displayName":"C","photoUrl":"https://example.com/c.png"}"#)
        let updated = await admin(":update", #"{"localId":"\#(uid)","displayName":"Cee","emailVerified":true,"email":"C2@example.com"}"#)
        #expect(updated.status == 200)
        #expect(Self.field(updated, "kind") == "identitytoolkit#SetAccountInfoResponse")
        #expect(Self.field(updated, "localId") == uid)
        #expect(updated.json?.objectValue?["idToken"] == nil)
        var user = try #require(await lookup(uid: uid))
        #expect(user["displayName"] == .string("Cee"))
        #expect(user["emailVerified"] == .bool(true))
        #expect(user["email"] == .string("c2@example.com"))
        #expect(user["photoUrl"] == .string("https://example.com/c.png"))

        #expect(await admin(":update", #"{"localId":"\#(uid)","deleteAttribute":["DISPLAY_NAME","PHOTO_URL"],"deleteProvider":["phone"]}"#).status == 200)
        user = try #require(await lookup(uid: uid))
        #expect(user["displayName"] == nil && user["photoUrl"] == nil)

        // A new password: the old one stops working, the new one works.
        #expect(await admin(":update", #"{"localId":"\#(uid)","password":"secret2"}"#).status == 200)
        #expect(await signIn("c2@example.com", "secret1").status == 400)
        #expect(await signIn("c2@example.com", "secret2").status == 200)

        // Disabling: sign-in refused, and the user shows as disabled.
        #expect(await admin(":update", #"{"localId":"\#(uid)","disableUser":true}"#).status == 200)
        #expect(await lookup(uid: uid)?["disabled"] == .bool(true))
        #expect(await signIn("c2@example.com", "secret2").json?.objectValue?["error"]?.objectValue?["message"] == .string("USER_DISABLED"))
        #expect(await admin(":update", #"{"localId":"\#(uid)","disableUser":false}"#).status == 200)
        #expect(await signIn("c2@example.com", "secret2").status == 200)
    }

    @Test func updateErrors() async throws {
        let uid = try await create(#"{"email":"d@example.com","password":"secret1"}"#)
        _ = try await create(#"{"email":"taken@example.com","password":"secret1"}"#)
        func code(_ body: String) async -> String? {
            await admin(":update", body).json?.objectValue?["error"]?.objectValue?["message"]?.stringValue
        }
        #expect(await code(#"{"localId":"nobody","displayName":"x"}"#) == "USER_NOT_FOUND")
        #expect(await code(#"{"displayName":"x"}"#) == "MISSING_LOCAL_ID")
        #expect(await code(#"{"localId":"\#(uid)","email":"taken@example.com"}"#) == "EMAIL_EXISTS")
        #expect(await code(#"{"localId":"\#(uid)","password":"123"}"#) == "WEAK_PASSWORD : Password should be at least 6 characters")
        #expect(await code(#"{"localId":"\#(uid)","phoneNumber":"+15555550100"}"#) == "OPERATION_NOT_ALLOWED : Hearth does not support phone numbers")
        #expect(await code(#"{"localId":"\#(uid)","deleteProvider":["password"]}"#) == "OPERATION_NOT_ALLOWED : Hearth cannot unlink provider password")
        #expect(await code(#"{"localId":"\#(uid)","validSince":"soon"}"#) == "INVALID_ARGUMENT : validSince must be an integer")
        // Nothing was changed by the failed updates.
        #expect(await lookup(uid: uid)?["email"] == .string("d@example.com"))
    }

    // MARK: Custom claims

    @Test func customClaimsReachLaterIDTokensAndTheRules() async throws {
        let uid = try await create(#"{"email":"e@example.com","password":"secret1"}"#)
        let before = try #require(Self.field(await signIn("e@example.com", "secret1"), "idToken"))
        #expect(await h.send("GET", "/staff.json", headers: [("Authorization", "Bearer \(before)")]).status == 401)

        // As the Python SDK sends them: a JSON string, with spaces.
        let set = await admin(":update", #"{"localId":"\#(uid)","customAttributes":"{\"role\": \"editor\", \"level\": 3}"}"#)
        #expect(set.status == 200)
        #expect(Self.field(set, "customAttributes") == #"{"level":3,"role":"editor"}"#)
        #expect(await lookup(uid: uid)?["customAttributes"] == .string(#"{"level":3,"role":"editor"}"#))

        let session = await signIn("e@example.com", "secret1")
        let after = try #require(Self.field(session, "idToken"))
        let claims = try h.auth.service.verify(after).objectValue ?? [:]
        #expect(claims["role"] == .string("editor"))
        #expect(claims["level"] == .int(3))
        #expect(claims["sub"] == .string(uid))
        #expect(await h.send("GET", "/staff.json", headers: [("Authorization", "Bearer \(after)")]).status == 200)
        // A refresh also picks them up (tokens minted before keep what they had).
        let refresh = try #require(Self.field(session, "refreshToken"))
        #expect(await admin(":update", #"{"localId":"\#(uid)","customAttributes":"{\"role\":\"viewer\"}"}"#).status == 200)
        let refreshed = await h.send("POST", "/v1/token", #"{"grant_type":"refresh_token","refresh_token":"\#(refresh)"}"#)
        let viewer = try #require(Self.field(refreshed, "id_token"))
        #expect(try h.auth.service.verify(viewer).objectValue?["role"] == .string("viewer"))
        #expect(await h.send("GET", "/staff.json", headers: [("Authorization", "Bearer \(viewer)")]).status == 401)

        // "{}" (the SDK's DELETE_ATTRIBUTE) clears them.
        #expect(await admin(":update", #"{"localId":"\#(uid)","customAttributes":"{}"}"#).status == 200)
        #expect(await lookup(uid: uid)?["customAttributes"] == nil)
        let cleared = try #require(Self.field(await signIn("e@example.com", "secret1"), "idToken"))
        #expect(try h.auth.service.verify(cleared).objectValue?["role"] == nil)
    }

    @Test func reservedClaimNamesAreRefused() async throws {
        let uid = try await create(#"{"email":"f@example.com","password":"secret1"}"#)
        // Firebase's reserved names, the ones Hearth's tokens carry, and the operator marker.
        let firebase: Set<String> = ["acr", "amr", "at_hash", "aud", "auth_time", "azp", "cnf", "c_hash", "exp", "iat", "iss", "jti", "nbf", "nonce", "sub", "firebase"]
        let hearth: Set<String> = ["user_id", "email", "email_verified", "phone_number", "name", "picture", "provider_id", "hearth_admin"]
        #expect(CustomClaimsPolicy.reservedNames == firebase.union(hearth))
        for name in CustomClaimsPolicy.reservedNames.sorted() {
            let response = await admin(":update", #"{"localId":"\#(uid)","customAttributes":"{\"\#(name)\":true}"}"#)
            #expect(response.status == 400)
            #expect(response.json?.objectValue?["error"]?.objectValue?["message"] == .string("FORBIDDEN_CLAIM : \(name)"), "\(name)")
        }
        #expect(try h.auth.service.accounts.user(uid: uid)?.customClaims == nil)
        // A user can still sign in: nothing unusable was stored.
        #expect(await signIn("f@example.com", "secret1").status == 200)
    }

    @Test func customClaimsAreCappedAt1000BytesAndMustBeAnObject() async throws {
        #expect(CustomClaimsPolicy.maxBytes == 1000)
        let uid = try await create(#"{"email":"g@example.com","password":"secret1"}"#)
        func attributes(ofLength length: Int) -> String {
            let padding = String(repeating: "x", count: length - #"{"k":""}"#.count)
            return #"{"k":"\#(padding)"}"#
        }
        func update(_ claims: String) async -> HTTPResponse {
            let body = JSONWriter.string(.object(["localId": .string(uid), "customAttributes": .string(claims)]))
            return await admin(":update", body)
        }
        #expect(await update(attributes(ofLength: CustomClaimsPolicy.maxBytes)).status == 200)
        let tooLarge = await update(attributes(ofLength: CustomClaimsPolicy.maxBytes + 1))
        #expect(tooLarge.status == 400)
        #expect(tooLarge.json?.objectValue?["error"]?.objectValue?["message"] == .string("CLAIMS_TOO_LARGE : custom claims must not exceed 1000 bytes"))
        for bad in ["[1,2]", "not json", "\"text\"", "7"] {
            let response = await update(bad)
            #expect(response.json?.objectValue?["error"]?.objectValue?["message"] == .string("INVALID_CLAIMS : customAttributes must be a JSON object"), "\(bad)")
        }
        // The largest accepted claims still make a token.
        #expect(try h.auth.service.verify(try #require(Self.field(await signIn("g@example.com", "secret1"), "idToken"))).objectValue?["k"] != nil)
    }

    @Test func theUsersOwnUpdateCannotSetClaimsOrVerifyTheEmail() async throws {
        let up = await h.send("POST", "/v1/accounts:signUp", #"{"email":"h@example.com","password":"secret1"}"#)
        let token = try #require(Self.field(up, "idToken"))
        let uid = try #require(Self.field(up, "localId"))
        let response = await h.send("POST", "/v1/accounts:update",
                                    #"{"idToken":"\#(token)","customAttributes":"{\"role\":\"editor\"}","emailVerified":true,"validSince":"0"}"#)
        #expect(response.status == 200)
        let user = try #require(try h.auth.service.accounts.user(uid: uid))
        #expect(user.customClaims == nil)
        #expect(user.emailVerified == false)
    }

    // MARK: Revocation

    @Test func validSinceNowRevokesEarlierTokensOfTheSameSecond() async throws {
        let uid = try await create(#"{"email":"i@example.com","password":"secret1"}"#)
        let session = await signIn("i@example.com", "secret1")
        let token = try #require(Self.field(session, "idToken"))
        let refresh = try #require(Self.field(session, "refreshToken"))
        #expect(await h.send("GET", "/open.json", headers: [("Authorization", "Bearer \(token)")]).status == 200)
        let iat = try #require(try h.auth.service.verify(token).objectValue?["iat"].flatMap { if case .int(let i) = $0 { i } else { nil } })

        // What revoke_refresh_tokens sends: the current second.
        let now = SQLiteTreeStore.systemMilliseconds() / 1000
        #expect(await admin(":update", #"{"localId":"\#(uid)","validSince":\#(now)}"#).status == 200)
        let validSince = try #require(await lookup(uid: uid)?["validSince"]?.stringValue.flatMap { Int64($0) })
        #expect(validSince > iat)  // so the SDK's check_revoked sees the token as revoked
        #expect(await h.send("GET", "/open.json", headers: [("Authorization", "Bearer \(token)")]).status == 401)
        let refreshed = await h.send("POST", "/v1/token", #"{"grant_type":"refresh_token","refresh_token":"\#(refresh)"}"#)
        #expect(refreshed.json?.objectValue?["error"]?.objectValue?["message"] == .string("INVALID_REFRESH_TOKEN"))

        // A new sign-in works, and its token is not older than validSince.
        let fresh = try #require(Self.field(await signIn("i@example.com", "secret1"), "idToken"))
        #expect(await h.send("GET", "/open.json", headers: [("Authorization", "Bearer \(fresh)")]).status == 200)
        let freshIat = try #require(try h.auth.service.verify(fresh).objectValue?["iat"].flatMap { if case .int(let i) = $0 { i } else { nil } })
        #expect(freshIat >= validSince)
    }

    /// A revocation from a client whose clock is behind (here, far behind) still
    /// refuses every token issued so far; it used to be stored as given and revoke nothing.
    @Test func validSinceFromALaggingClockStillRevokesAndFarAheadIsRefused() async throws {
        let uid = try await create(#"{"email":"j@example.com","password":"secret1"}"#)
        let session = await signIn("j@example.com", "secret1")
        let refresh = try #require(Self.field(session, "refreshToken"))
        let token = try #require(Self.field(session, "idToken"))
        let iat = try #require(try h.auth.service.verify(token).objectValue?["iat"].flatMap { if case .int(let i) = $0 { i } else { nil } })
        #expect(await admin(":update", #"{"localId":"\#(uid)","validSince":"1000"}"#).status == 200)
        let validSince = try #require(await lookup(uid: uid)?["validSince"]?.stringValue.flatMap { Int64($0) })
        #expect(validSince > iat)
        #expect(await h.send("GET", "/open.json", headers: [("Authorization", "Bearer \(token)")]).status == 401)
        #expect(await h.send("POST", "/v1/token", #"{"grant_type":"refresh_token","refresh_token":"\#(refresh)"}"#).status == 400)

        let now = SQLiteTreeStore.systemMilliseconds() / 1000
        let ahead = await admin(":update", #"{"localId":"\#(uid)","validSince":\#(now + AccountService.maxValidSinceAhead + 5)}"#)
        #expect(ahead.status == 400)
        #expect(Self.errorMessage(ahead)?.hasPrefix("INVALID_ARGUMENT : validSince") == true)
        #expect(AccountService.maxValidSinceAhead == TokenVerifier.defaultLeeway)
        #expect(await admin(":update", #"{"localId":"\#(uid)","validSince":-1}"#).status == 400)
    }

    static func errorMessage(_ response: HTTPResponse) -> String? {
        response.json?.objectValue?["error"]?.objectValue?["message"]?.stringValue
    }

    // MARK: Delete

    @Test func deleteAnswersKindAndEndsTheUser() async throws {
        let uid = try await create(#"{"email":"k@example.com","password":"secret1"}"#)
        let token = try #require(Self.field(await signIn("k@example.com", "secret1"), "idToken"))
        let deleted = await admin(":delete", #"{"localId":"\#(uid)"}"#)
        #expect(deleted.status == 200)
        #expect(deleted.json == .object(["kind": "identitytoolkit#DeleteAccountResponse"]))
        #expect(await lookup(uid: uid) == nil)
        #expect(await h.send("GET", "/open.json", headers: [("Authorization", "Bearer \(token)")]).status == 401)
        #expect(Self.errorMessage(await admin(":delete", #"{"localId":"\#(uid)"}"#)) == "USER_NOT_FOUND")
        #expect(Self.errorMessage(await admin(":delete", "{}")) == "MISSING_LOCAL_ID")
        // The email is free again.
        _ = try await create(#"{"email":"k@example.com","password":"secret1"}"#)
    }

    @Test func batchDeleteKeepsEnabledUsersUnlessForced() async throws {
        let enabled = try await create(#"{"localId":"enabled"}"#)
        let disabled = try await create(#"{"localId":"disabled","disabled":true}"#)
        let response = await admin(":batchDelete", #"{"localIds":["\#(enabled)","nobody","\#(disabled)"]}"#)
        #expect(response.status == 200)
        #expect(response.json == .object([
            "kind": "identitytoolkit#BatchDeleteAccountsResponse",
            "errors": [["index": 0, "localId": "enabled", "message": "NOT_DISABLED : Disable the account before batch deletion."]],
        ]))
        #expect(await lookup(uid: enabled) != nil)
        #expect(await lookup(uid: disabled) == nil)
        let forced = await admin(":batchDelete", #"{"localIds":["\#(enabled)"],"force":true}"#)
        #expect(forced.json == .object(["kind": "identitytoolkit#BatchDeleteAccountsResponse"]))
        #expect(await lookup(uid: enabled) == nil)
        let many = (0...AdminDeleteEndpoint.maxBatchDelete).map { #""u\#($0)""# }.joined(separator: ",")
        #expect(Self.errorMessage(await admin(":batchDelete", #"{"localIds":[\#(many)]}"#)) == "INVALID_ARGUMENT : at most 1000 localIds in one batch")
    }

    // MARK: List

    @Test func batchGetPagesThroughEveryUserOnce() async throws {
        var uids: [String] = []
        for i in 0..<7 { uids.append(try await create(#"{"email":"list\#(i)@example.com","password":"secret1"}"#)) }
        var seen: [String] = []
        var pages: [Int] = []
        var token: String?
        repeat {
            let query = "?maxResults=3" + (token.map { "&nextPageToken=\($0)" } ?? "")
            let page = await admin(":batchGet" + query, method: "GET")
            #expect(page.status == 200)
            #expect(Self.field(page, "kind") == "identitytoolkit#DownloadAccountResponse")
            let users = page.json?.objectValue?["users"]?.arrayValue ?? []
            #expect(users.allSatisfy { $0.objectValue?["passwordHash"] == nil && $0.objectValue?["salt"] == nil })
            seen += users.compactMap { $0.objectValue?["localId"]?.stringValue }
            pages.append(users.count)
            token = Self.field(page, "nextPageToken")
        } while token != nil && pages.count < 10
        #expect(pages == [3, 3, 1])
        #expect(seen == uids.sorted())

        // Exactly one full page: no token to a page that would be empty.
        let all = await admin(":batchGet?maxResults=7", method: "GET")
        #expect(all.json?.objectValue?["users"]?.arrayValue?.count == 7)
        #expect(all.json?.objectValue?["nextPageToken"] == nil)
        // The default page size.
        #expect(AdminListEndpoint.defaultMaxResults == 20 && AdminListEndpoint.maxResultsLimit == 1000)
        #expect(await admin(":batchGet", method: "GET").json?.objectValue?["users"]?.arrayValue?.count == 7)
        // On the path without the prefix too.
        #expect(await admin(":batchGet?maxResults=1000", method: "GET", base: "/v1/projects/hearth").json?.objectValue?["users"]?.arrayValue?.count == 7)
    }

    @Test func batchGetErrorsAndAnEmptyProject() async throws {
        let empty = await admin(":batchGet?maxResults=10", method: "GET")
        #expect(empty.json == .object(["kind": "identitytoolkit#DownloadAccountResponse"]))
        for bad in ["0", "1001", "x", "-1"] {
            #expect(Self.errorMessage(await admin(":batchGet?maxResults=\(bad)", method: "GET")) == "INVALID_ARGUMENT : maxResults must be 1 to 1000", "\(bad)")
        }
        #expect(Self.errorMessage(await admin(":batchGet?nextPageToken=%25%25", method: "GET")) == "INVALID_PAGE_SELECTION")
        #expect(await admin(":batchGet", "{}").status == 405)
        #expect(await admin(":lookup", method: "GET").status == 405)
    }
}
