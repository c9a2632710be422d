import HearthJSON
import Testing
@testable import HearthAuth

@Suite("IDTokenClaims")
struct IDTokenClaimsTests {
    @Test func passwordUser() throws {
        let claims = try IDTokenClaims(
            projectID: "demo-project", uid: "uid123", issuedAt: 1_700_000_100, authTime: 1_700_000_000,
            signInProvider: "password", email: "ada@example.com", emailVerified: true,
            customClaims: ["admin": true, "tier": ["level": 3]]
        ).json()
        #expect(claims == [
            "iss": "https://securetoken.google.com/demo-project",
            "aud": "demo-project",
            "auth_time": 1_700_000_000,
            "user_id": "uid123",
            "sub": "uid123",
            "iat": 1_700_000_100,
            "exp": 1_700_003_700,
            "email": "ada@example.com",
            "email_verified": true,
            "firebase": ["identities": ["email": ["ada@example.com"]], "sign_in_provider": "password"],
            "admin": true,
            "tier": ["level": 3],
        ])
    }

    @Test func anonymousUser() throws {
        let claims = try IDTokenClaims(projectID: "p", uid: "anon", issuedAt: 100, signInProvider: "anonymous").json()
        #expect(claims == [
            "iss": "https://securetoken.google.com/p", "aud": "p", "auth_time": 100, "user_id": "anon", "sub": "anon",
            "iat": 100, "exp": 3700, "provider_id": "anonymous",
            "firebase": ["identities": [:], "sign_in_provider": "anonymous"],
        ])
    }

    @Test func optionalProfileClaimsAndExplicitIdentities() throws {
        let claims = try IDTokenClaims(
            projectID: "p", uid: "u", issuedAt: 0, lifetime: 60, signInProvider: "custom",
            phoneNumber: "+15555550100", name: "Ada", picture: "https://example.com/a.png",
            identities: ["google.com": ["1234"]]
        ).json()
        let members = try #require(claims.objectValue)
        #expect(members["exp"] == 60)
        #expect(members["phone_number"] == "+15555550100")
        #expect(members["name"] == "Ada")
        #expect(members["picture"] == "https://example.com/a.png")
        #expect(members["email"] == nil && members["email_verified"] == nil && members["provider_id"] == nil)
        #expect(members["firebase"] == ["identities": ["google.com": ["1234"]], "sign_in_provider": "custom"])
    }

    @Test(arguments: Array(IDTokenClaims.reservedClaimNames).sorted())
    func reservedNamesAreRejected(name: String) {
        let builder = IDTokenClaims(projectID: "p", uid: "u", issuedAt: 0, signInProvider: "password", customClaims: [JSONKey(name): 1])
        #expect(throws: ClaimsError.reservedClaim(name)) { try builder.json() }
    }

    @Test func customClaimsSizeLimit() throws {
        // {"k":"…"} is 8 bytes of framing.
        let fits: JSONValue = ["k": .string(String(repeating: "x", count: IDTokenClaims.maxCustomClaimsBytes - 8))]
        #expect(JSONWriter.write(fits).count == IDTokenClaims.maxCustomClaimsBytes)
        _ = try IDTokenClaims.validateCustomClaims(fits)
        let over: JSONValue = ["k": .string(String(repeating: "x", count: IDTokenClaims.maxCustomClaimsBytes - 7))]
        #expect(throws: ClaimsError.customClaimsTooLarge) { try IDTokenClaims.validateCustomClaims(over) }
        let builder = IDTokenClaims(projectID: "p", uid: "u", issuedAt: 0, signInProvider: "password", customClaims: over.objectValue!)
        #expect(throws: ClaimsError.customClaimsTooLarge) { try builder.json() }
        #expect(throws: ClaimsError.customClaimsNotAnObject) { try IDTokenClaims.validateCustomClaims([1, 2]) }
    }

    @Test func validatesUIDProjectAndLifetime() {
        func build(project: String = "p", uid: String = "u", lifetime: Int64 = 3600) throws(ClaimsError) -> JSONValue {
            try IDTokenClaims(projectID: project, uid: uid, issuedAt: 0, lifetime: lifetime, signInProvider: "password").json()
        }
        #expect(throws: ClaimsError.invalidUID) { try build(uid: "") }
        #expect(throws: ClaimsError.invalidUID) { try build(uid: String(repeating: "a", count: 129)) }
        #expect(throws: ClaimsError.invalidProjectID) { try build(project: "") }
        #expect(throws: ClaimsError.invalidLifetime) { try build(lifetime: 0) }
        #expect(throws: ClaimsError.invalidLifetime) { try build(lifetime: 3601) }
    }

    @Test func signedAndVerified() throws {
        let claims = try IDTokenClaims(projectID: "p", uid: "u", issuedAt: Fixture.now, signInProvider: "password", email: "a@b.c").json()
        let token = try TokenSigner(key: Fixture.key()).sign(claims: claims)
        #expect(try Fixture.verifier(audience: "p", issuer: "https://securetoken.google.com/p").verify(token) == claims)
    }
}
