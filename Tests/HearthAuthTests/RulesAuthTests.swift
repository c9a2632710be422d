import HearthJSON
import Testing
@testable import HearthAuth

@Suite("RulesAuth")
struct RulesAuthTests {
    @Test func shapesTheAuthVariable() throws {
        let claims = try IDTokenClaims(projectID: "p", uid: "u1", issuedAt: Fixture.now, signInProvider: "password", email: "a@b.c").json()
        let verified = try Fixture.verifier().verify(try TokenSigner(key: Fixture.key()).sign(claims: claims))
        #expect(RulesAuth.value(fromVerifiedClaims: verified) == ["uid": "u1", "provider": "password", "token": claims])
    }

    @Test func providerIsOptional() {
        let claims: JSONValue = ["sub": "u1", "iat": 1, "exp": 2]
        #expect(RulesAuth.value(fromVerifiedClaims: claims) == ["uid": "u1", "token": claims])
        let oddProvider: JSONValue = ["sub": "u1", "firebase": ["sign_in_provider": 5]]
        #expect(RulesAuth.value(fromVerifiedClaims: oddProvider) == ["uid": "u1", "token": oddProvider])
    }

    @Test func needsAStringSubject() {
        #expect(RulesAuth.value(fromVerifiedClaims: ["sub": 1]) == nil)
        #expect(RulesAuth.value(fromVerifiedClaims: "u1") == nil)
    }
}
